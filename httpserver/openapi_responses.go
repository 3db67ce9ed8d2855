package httpserver

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/sandbox"
)

// Problem answers that many operations share are one component each
// (components.responses), referenced wherever they can happen, so that a
// client handles "rate limited" once. An operation whose answers at a
// status are exactly one shared code references it; any other set of codes
// gets an inline response whose code is the enum of that set.
var sharedResponses = []struct {
	name string
	code fiscal.Code
}{
	{"BadRequest", fiscal.CodeBadRequest},
	{"Unauthorized", fiscal.CodeAuthenticationFailed},
	{"NotFound", fiscal.CodeNotFound},
	{"PayloadTooLarge", codePayloadTooLarge},
	{"UnsupportedMediaType", codeUnsupportedMedia},
	{"RateLimited", codeRateLimited},
	{"InternalError", fiscal.CodeInternal},
	{"Unavailable", fiscal.CodeDBUnavailable},
}

// sharedResponse names the shared response for exactly these codes.
func sharedResponse(codes []fiscal.Code) (string, bool) {
	if len(codes) != 1 {
		return "", false
	}
	for _, r := range sharedResponses {
		if r.code == codes[0] {
			return r.name, true
		}
	}
	return "", false
}

// problemResponse is the response object of problem answers with the given
// codes (all of one status).
func problemResponse(g *schemaGen, status int, codes []fiscal.Code) map[string]any {
	var lines []string
	enum := make([]string, 0, len(codes))
	for _, c := range codes {
		lines = append(lines, "`"+string(c)+"`: "+codeDocs[c])
		enum = append(enum, string(c))
	}
	headers := map[string]any{"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}}
	if status == 429 || status == 503 {
		headers["Retry-After"] = map[string]any{"$ref": "#/components/headers/Retry-After"}
	}
	if slices.Contains(codes, sandbox.CodeQuotaExceeded) { // the quota's state, with the reset time, as on every counted answer
		for _, h := range []string{"X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset"} {
			headers[h] = map[string]any{"$ref": "#/components/headers/" + h}
		}
	}
	if status == 401 {
		headers["WWW-Authenticate"] = map[string]any{"$ref": "#/components/headers/WWW-Authenticate"}
	}
	schema := map[string]any{"allOf": []any{
		g.ref(reflect.TypeFor[problemDoc]()),
		map[string]any{"properties": map[string]any{"code": map[string]any{"type": "string", "enum": enum}}},
	}}
	return map[string]any{
		"description": strings.Join(lines, " "),
		"headers":     headers,
		"content": map[string]any{"application/problem+json": map[string]any{
			"schema":  schema,
			"example": problemExample(status, codes[0]),
		}},
	}
}

// problemExample is a problem document as s.problem writes it.
func problemExample(status int, code fiscal.Code) map[string]any {
	ex := map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "code": string(code),
		"detail": exampleDetails[code], "request_id": "req_5f1c0a9e3b7d2c4e6a8b0d1f",
	}
	if code == fiscal.CodeBadRequest {
		ex["field"] = "/amountUsdc"
	}
	if ex["detail"] == "" {
		ex["detail"] = strings.TrimSuffix(codeDocs[code], ".")
	}
	return ex
}

// sharedResponseComponents are the components.responses the document uses.
func sharedResponseComponents(g *schemaGen, used map[string]bool) map[string]any {
	out := map[string]any{}
	for _, r := range sharedResponses {
		if used[r.name] {
			resp := problemResponse(g, httpStatus(r.code), []fiscal.Code{r.code})
			if ex, ok := recordedProblem(httpStatus(r.code), r.code); ok {
				resp["content"].(map[string]any)["application/problem+json"].(map[string]any)["example"] = ex
			}
			out[r.name] = resp
		}
	}
	return out
}

// recordedProblem is a recorded answer with this status and code, from
// the first operation (by operationId) that has one.
func recordedProblem(status int, code fiscal.Code) (any, bool) {
	ids := make([]string, 0, len(examples()))
	for id := range examples() {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if ex, ok := responseExample(id, status); ok {
			if m, ok := ex.(map[string]any); ok && m["code"] == string(code) {
				return ex, true
			}
		}
	}
	return nil, false
}

// errorResponses adds the problem answers of op to responses.
func errorResponses(g *schemaGen, op operation, responses map[string]any, used map[string]bool) {
	byStatus := errorsByStatus(op)
	statuses := make([]int, 0, len(byStatus))
	for st := range byStatus {
		statuses = append(statuses, st)
	}
	slices.Sort(statuses)
	for _, st := range statuses {
		codes := byStatus[st]
		if name, ok := sharedResponse(codes); ok {
			used[name] = true
			responses[fmt.Sprint(st)] = map[string]any{"$ref": "#/components/responses/" + name}
			continue
		}
		responses[fmt.Sprint(st)] = problemResponse(g, st, codes)
	}
}

// exampleDetails are the details of the examples, as the service writes
// them.
var exampleDetails = map[fiscal.Code]string{
	fiscal.CodeBadRequest:           "amountUsdc must be a decimal string with at most 6 decimals",
	fiscal.CodeAuthenticationFailed: "the X-Service-Key is not valid",
	fiscal.CodeNotFound:             "no record x402-58da266c40105d3ff1aba32e04c2d1b8 for this account",
	codeRateLimited:                 "more than 100 requests per second (burst 200) for this account; retry after the Retry-After interval",
	fiscal.CodeInternal:             "internal error",
	fiscal.CodeDBUnavailable:        "the ledger is unavailable right now; retry after Retry-After (nothing was written)",
	codePayloadTooLarge:             "the request body is larger than 65536 bytes",
	codeUnsupportedMedia:            "the request body must be JSON sent with Content-Type: application/json",
}

// dateOrInstant is the schema of a list filter that takes a day or an
// instant.
func dateOrInstant() map[string]any {
	return map[string]any{"type": "string", "anyOf": []any{map[string]any{"format": "date"}, map[string]any{"format": "date-time"}}}
}

// ublSchema is a UBL document answer: the exact stored bytes, which a
// generated client must keep as they are (their SHA-256 is on the record
// and in the receipt), so binary rather than text.
func ublSchema() map[string]any {
	return map[string]any{"type": "string", "format": "binary", "contentMediaType": "application/xml",
		"description": "The UBL 2.1 XML document, byte for byte as stored: its SHA-256 is the record's `invoice.ublSha256`."}
}
