package anviltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// rpcClient is the harness's own JSON-RPC client. It is deliberately not
// evmverify.Client: the harness is what evmverify is tested against, so it
// must not share its code.
type rpcClient struct {
	url    string
	hc     *http.Client
	lastID atomic.Uint64
}

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("json-rpc error %d: %s (%s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

func (c *rpcClient) call(method string, params []any, result any) error {
	if params == nil {
		params = []any{}
	}
	id := c.lastID.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var reply struct {
		ID     uint64          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return fmt.Errorf("%s: http %d: %w: %.200s", method, resp.StatusCode, err, raw)
	}
	if reply.Error != nil {
		return fmt.Errorf("%s: %w", method, reply.Error)
	}
	if reply.ID != id {
		return fmt.Errorf("%s: reply id %d, want %d", method, reply.ID, id)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(reply.Result, result); err != nil {
		return fmt.Errorf("%s: result %.200s: %w", method, reply.Result, err)
	}
	return nil
}
