package vies

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// maxReplyBytes bounds what is read from a registry: a real VIES or HMRC
// reply is well under 4 KiB; anything past 1 MiB is not one.
const maxReplyBytes = 1 << 20

// reply is a registry's HTTP answer, fully read.
type reply struct {
	status int
	body   []byte
}

// failure is a transport-level failure classified as a fault code.
type failure struct {
	fault  string
	detail string
}

// call makes one HTTP request bounded by timeout and reads the whole reply.
// A request that does not complete is classified, never reported as an
// answer: the caller's own cancellation is CANCELED (or TIMEOUT for the
// caller's deadline), the per-attempt timeout is TIMEOUT, anything else is
// NETWORK.
func call(ctx context.Context, client *http.Client, timeout time.Duration, method, url string, header http.Header, body []byte) (reply, *failure) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, url, rd)
	if err != nil {
		// Only a malformed base URL gets here: a configuration problem.
		return reply{}, &failure{FaultNetwork, fmt.Sprintf("cannot build request: %v", stripURL(err))}
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, classify(ctx, actx, timeout, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		return reply{}, classify(ctx, actx, timeout, err)
	}
	if len(data) > maxReplyBytes {
		fault := FaultMalformed
		if resp.StatusCode != http.StatusOK {
			// An error status says what it says whatever its page: a
			// large 503 is still "down", to be retried.
			fault = httpFault(resp.StatusCode)
		}
		return reply{}, &failure{fault, fmt.Sprintf("HTTP %d reply larger than %d bytes", resp.StatusCode, maxReplyBytes)}
	}
	return reply{status: resp.StatusCode, body: data}, nil
}

func classify(parent, attempt context.Context, timeout time.Duration, err error) *failure {
	switch {
	case errors.Is(parent.Err(), context.Canceled):
		return &failure{FaultCanceled, "caller canceled the lookup"}
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return &failure{FaultTimeout, "caller's deadline passed before the registry answered"}
	case errors.Is(attempt.Err(), context.DeadlineExceeded):
		return &failure{FaultTimeout, fmt.Sprintf("no reply within %s", timeout)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &failure{FaultTimeout, clip(stripURL(err).Error())}
	}
	return &failure{FaultNetwork, clip(stripURL(err).Error())}
}

// stripURL drops the request URL net/http quotes in a transport error
// (*url.Error: `Get "https://…/lookup/{target}/{requester}": …`), keeping
// what failed. HMRC's lookup URL carries the buyer's VRN, a sole trader's
// personal data (Art. 4(1) GDPR), and the failure's text becomes
// Result.Detail, which the record keeps and a log line may show.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
