package evmverify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
)

// MaxReplyBytes bounds one JSON-RPC reply. The largest answer this package
// asks for is a transaction receipt; even a receipt with thousands of logs
// stays well below this. A larger reply is treated as garbage
// (ErrUnavailable), so a hostile or broken endpoint cannot exhaust memory.
const MaxReplyBytes = 8 << 20

// Client is a minimal Ethereum JSON-RPC 2.0 client over HTTP POST, written
// on the standard library (no go-ethereum): it knows exactly the methods a
// verifier needs. A Client is safe for concurrent use.
//
// Every failure a Client reports wraps ErrUnavailable: a transport error, a
// non-2xx status, a reply that is not JSON-RPC 2.0 for this request, a
// JSON-RPC error object (as *RPCError), or a result of the wrong shape. A
// null result is not a failure; the typed methods report it as found=false.
type Client struct {
	url      string
	endpoint string // redacted form of url for messages
	hc       *http.Client
	lastID   atomic.Uint64
}

// NewClient returns a Client for an http or https endpoint. hc nil means a
// new http.Client without timeout; bound calls with the context.
//
// The URL often carries a provider API key in its path or query, so error
// messages name the endpoint only as scheme://host (see Endpoint).
func NewClient(rawURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("evmverify: rpc url must be absolute http(s), have %q", redactURL(rawURL))
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{url: rawURL, endpoint: u.Scheme + "://" + u.Host, hc: hc}, nil
}

// redactURL keeps what is safe to log of a URL that failed to parse.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return "<unparsable>"
}

// Endpoint returns scheme://host of the endpoint: enough to tell endpoints
// apart in logs, without the path or query where API keys live.
func (c *Client) Endpoint() string { return c.endpoint }

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

// Call performs one JSON-RPC call and decodes its result into result (a
// pointer; *json.RawMessage receives the raw bytes; nil discards it).
// params nil is sent as an empty array. Each call carries a fresh id that
// the reply must echo.
func (c *Client) Call(ctx context.Context, method string, params []any, result any) error {
	if params == nil {
		params = []any{}
	}
	id := c.lastID.Add(1)
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		// Only this package builds params; a failure here is a bug in it,
		// but it is still not a statement about the claim.
		return c.fail(method, "encode request: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return c.fail(method, "build request: %v", stripURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("evmverify: rpc %s %s: %w: %w", c.endpoint, method, ErrUnavailable, ctxErr)
		}
		return c.fail(method, "%v", stripURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxReplyBytes+1))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("evmverify: rpc %s %s: %w: %w", c.endpoint, method, ErrUnavailable, ctxErr)
		}
		return c.fail(method, "read reply: %v", stripURL(err))
	}
	if len(raw) > MaxReplyBytes {
		return c.fail(method, "reply exceeds %d bytes", MaxReplyBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.fail(method, "http status %d", resp.StatusCode)
	}
	res, err := decodeReply(id, raw)
	if err != nil {
		var rpcErr *RPCError
		if errors.As(err, &rpcErr) {
			return fmt.Errorf("evmverify: rpc %s %s: %w: %w", c.endpoint, method, ErrUnavailable, rpcErr)
		}
		return c.fail(method, "%v", err)
	}
	if result == nil {
		return nil
	}
	if rm, ok := result.(*json.RawMessage); ok {
		*rm = res
		return nil
	}
	if err := json.Unmarshal(res, result); err != nil {
		return c.fail(method, "result: %v", err)
	}
	return nil
}

func (c *Client) fail(method, format string, args ...any) error {
	return fmt.Errorf("evmverify: rpc %s %s: %w: %s", c.endpoint, method, ErrUnavailable, fmt.Sprintf(format, args...))
}

// stripURL drops the request URL that net/http puts into its errors
// (*url.Error): it may hold an API key.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

var (
	errNotJSONRPC  = errors.New("reply is not a json-rpc 2.0 object")
	errIDMismatch  = errors.New("reply id does not match the request")
	errNoResult    = errors.New("reply has neither result nor error")
	errBothResults = errors.New("reply has both result and error")
)

// maxRPCMessage bounds the error message kept from a node, which ends up in
// logs and problem details.
const maxRPCMessage = 256

// decodeReply checks that raw is the JSON-RPC 2.0 response object to the
// request with the given id (JSON-RPC 2.0 §5) and returns its result, which
// may be the literal null. An error object comes back as *RPCError.
func decodeReply(id uint64, raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errNotJSONRPC
	}
	var r rpcReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotJSONRPC, err)
	}
	if r.JSONRPC != "2.0" {
		return nil, errNotJSONRPC
	}
	if string(r.ID) != strconv.FormatUint(id, 10) {
		return nil, errIDMismatch
	}
	// A member that is present with the value null decodes to the raw bytes
	// "null"; an absent member stays nil.
	switch {
	case r.Error != nil && r.Result != nil && string(r.Result) != "null":
		return nil, errBothResults
	case r.Error != nil:
		r.Error.Message = truncate(r.Error.Message, maxRPCMessage)
		return nil, r.Error
	case r.Result == nil:
		return nil, errNoResult
	}
	return r.Result, nil
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
