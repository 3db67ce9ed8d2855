package httpserver

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/fiscal402/fiscal402/catalog"
)

// The examples of the OpenAPI document are real answers: TestOpenAPIExamples
// runs the walkthrough and its error cases against a server with a fixed
// clock and deterministic keys and writes each request body and answer,
// keyed by operationId and status, to openapi_examples.json (rewrite it
// with -update, and review the diff like any golden file). A few answers
// the fixture cannot produce without a chain (an x402 payment recorded or
// queued) are built there from the same types and say so. Problem answers
// without a recorded example get one in the exact shape s.problem writes.

//go:embed openapi_examples.json
var examplesJSON []byte

// opExamples are the examples of one operation.
type opExamples struct {
	Request   any            `json:"request,omitempty"`
	Responses map[string]any `json:"responses"`
}

var (
	examplesOnce sync.Once
	examplesByOp map[string]opExamples
)

// examples returns the examples by operationId (none if the file does not
// parse: TestOpenAPIExamples fails then).
func examples() map[string]opExamples {
	examplesOnce.Do(func() {
		if err := json.Unmarshal(examplesJSON, &examplesByOp); err != nil {
			examplesByOp = map[string]opExamples{}
		}
	})
	return examplesByOp
}

// responseExample is the example of an operation's answer at status, if
// one was recorded.
func responseExample(opID string, status int) (any, bool) {
	ex, ok := examples()[opID].Responses[fmt.Sprint(status)]
	return ex, ok
}

// openAPIExcerpt is the example of GET /openapi.json: the document itself
// would be its own example, so an excerpt.
func openAPIExcerpt() map[string]any {
	return map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": catalog.ServiceName, "version": catalog.APIVersion}, "paths": map[string]any{}}
}

// exampleMediaType reports whether an answer of this media type carries an
// example (JSON and text; a UBL document is binary and is left out).
func exampleMediaType(mt string) bool {
	return strings.HasSuffix(mt, "json") || mt == "text/plain"
}
