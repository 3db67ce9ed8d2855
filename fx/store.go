package fx

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Store keeps the ECB documents a Refresher fetched, durably, so that a
// restart serves them without the network. The engine implements it over its
// ledger database (one key holding the blob). Load returns what Save stored
// last, or nil and no error when nothing was ever stored. Save replaces it
// atomically. The blob is EncodeDocuments' format; a Store need not look
// inside.
type Store interface {
	Load(ctx context.Context) ([]byte, error)
	Save(ctx context.Context, blob []byte) error
}

// MemoryStore is a Store in memory, for tests and for running without
// persistence. The zero value is empty and ready.
type MemoryStore struct {
	blob []byte
}

func (m *MemoryStore) Load(context.Context) ([]byte, error) { return bytes.Clone(m.blob), nil }

func (m *MemoryStore) Save(_ context.Context, blob []byte) error {
	m.blob = bytes.Clone(blob)
	return nil
}

// Document is one ECB feed response, kept byte for byte: parsing it again
// reproduces the snapshot "fetch:sha256:<SHA256>" its rates recorded.
type Document struct {
	URL       string    `json:"url"`
	FetchedAt time.Time `json:"fetchedAt"`
	SHA256    string    `json:"sha256"` // hex of Body
	Body      []byte    `json:"body"`   // base64 in JSON
}

// Table parses the document as Fetch did.
func (d Document) Table() (*Table, error) {
	return parseData(d.Body, "fetch", d.URL)
}

// documentsFormat names the stored format; a blob of another version is
// refused rather than misread.
const documentsFormat = "fiscal402.fx.documents/1"

type documentsFile struct {
	Format    string     `json:"format"`
	Documents []Document `json:"documents"`
}

// EncodeDocuments is the Store format: gzip-compressed JSON
// {"format":"fiscal402.fx.documents/1","documents":[{"url","fetchedAt",
// "sha256","body"(base64)}...]}, documents in the order they were merged
// (restoring merges them in that order, so every rate keeps the snapshot
// of the document that first supplied it). Deterministic for the same
// input.
func EncodeDocuments(docs []Document) ([]byte, error) {
	raw, err := json.Marshal(documentsFile{Format: documentsFormat, Documents: docs})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ErrStoreFormat means a stored blob is not EncodeDocuments' format or a
// document's body does not match its SHA-256.
var ErrStoreFormat = errors.New("fx: stored documents unreadable")

// maxStoreSize bounds the decompressed blob: the full ECB XML history is a
// few MB, and the Refresher keeps only documents that added something.
const maxStoreSize = 256 << 20

// DecodeDocuments reads EncodeDocuments' format. An empty blob is no
// documents. Errors wrap ErrStoreFormat.
func DecodeDocuments(blob []byte) ([]Document, error) {
	if len(blob) == 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStoreFormat, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxStoreSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStoreFormat, err)
	}
	if len(raw) > maxStoreSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrStoreFormat, maxStoreSize)
	}
	var f documentsFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStoreFormat, err)
	}
	if f.Format != documentsFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrStoreFormat, f.Format, documentsFormat)
	}
	for i, d := range f.Documents {
		sum := sha256.Sum256(d.Body)
		if hex.EncodeToString(sum[:]) != d.SHA256 {
			return nil, fmt.Errorf("%w: document %d (%s): body does not match its sha256", ErrStoreFormat, i, d.URL)
		}
	}
	return f.Documents, nil
}

func newDocument(url string, at time.Time, body []byte) Document {
	sum := sha256.Sum256(body)
	return Document{URL: url, FetchedAt: at.UTC(), SHA256: hex.EncodeToString(sum[:]), Body: body}
}
