package httpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/webhooks"
)

// The webhook endpoints and the event backfill. Every route needs the
// X-Service-Key and sees only the key's account.

// listWebhookEndpoints: GET /v1/webhook-endpoints.
func (s *Server) listWebhookEndpoints(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.Webhooks.Endpoints(r.Context(), accountID(r))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	// Every endpoint fits one page (webhooks.MaxEndpoints): the one list
	// shape, with has_more always false.
	s.writeResult(w, r, struct {
		Object  string              `json:"object"`
		Data    []webhooks.Endpoint `json:"data"`
		HasMore bool                `json:"has_more"`
	}{"list", list, false}, nil)
}

// postWebhookEndpoint: POST /v1/webhook-endpoints {url, description}. 201
// with the endpoint and its secret, which is not shown again but to a
// replay of the Idempotency-Key (201, Idempotent-Replayed: true) while the
// endpoint exists and that secret was not rotated
// (webhooks.Service.CreateEndpointIdempotent).
func (s *Server) postWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req webhooks.EndpointRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := s.svc.Webhooks.CreateEndpointIdempotent(r.Context(), accountID(r), req, key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/webhook-endpoints/"+res.ID)
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	s.writeCreatedSecret(w, r, res.EndpointWithSecret)
}

// writeCreatedSecret answers 201 with a secret that is shown once: no
// cache may keep it.
func (s *Server) writeCreatedSecret(w http.ResponseWriter, r *http.Request, ep *webhooks.EndpointWithSecret) {
	w.Header().Set("Cache-Control", "no-store")
	raw, err := json.Marshal(ep)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, raw)
}

// getWebhookEndpoint: GET /v1/webhook-endpoints/{id}.
func (s *Server) getWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	ep, err := s.svc.Webhooks.Endpoint(r.Context(), accountID(r), r.PathValue("id"))
	w.Header().Set("Cache-Control", "no-store")
	s.writeResult(w, r, ep, err)
}

// deleteWebhookEndpoint: DELETE /v1/webhook-endpoints/{id}. 204.
func (s *Server) deleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Webhooks.DeleteEndpoint(r.Context(), accountID(r), r.PathValue("id")); err != nil {
		s.problem(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// postWebhookSecret: POST /v1/webhook-endpoints/{id}/secrets, the start of
// a rotation. 201 with the new secret, shown once but to a replay of the
// Idempotency-Key (201, Idempotent-Replayed: true) while that secret is the
// endpoint's newest (webhooks.Service.AddSecretIdempotent); both secrets
// sign until the old one is deleted.
func (s *Server) postWebhookSecret(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := s.svc.Webhooks.AddSecretIdempotent(r.Context(), accountID(r), r.PathValue("id"), key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	s.writeCreatedSecret(w, r, res.EndpointWithSecret)
}

// deleteWebhookSecret: DELETE /v1/webhook-endpoints/{id}/secrets/{secretId},
// the end of a rotation. 200 with the endpoint.
func (s *Server) deleteWebhookSecret(w http.ResponseWriter, r *http.Request) {
	ep, err := s.svc.Webhooks.DeleteSecret(r.Context(), accountID(r), r.PathValue("id"), r.PathValue("secretId"))
	w.Header().Set("Cache-Control", "no-store")
	s.writeResult(w, r, ep, err)
}

// postWebhookEnable: POST /v1/webhook-endpoints/{id}/enable, after a 410
// disabled it. 200 with the endpoint.
func (s *Server) postWebhookEnable(w http.ResponseWriter, r *http.Request) {
	ep, err := s.svc.Webhooks.EnableEndpoint(r.Context(), accountID(r), r.PathValue("id"))
	w.Header().Set("Cache-Control", "no-store")
	s.writeResult(w, r, ep, err)
}

// listEvents: GET /v1/events?after=<sequence>&limit=<n>, the account's
// events with their records, for backfill. Without after, from the first.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := onlyParams(q, "cursor", "limit", "after"); err != nil { // the same problem for the same query
		s.problem(w, r, err)
		return
	}
	cursor := q.Get("cursor")
	if q.Has("after") { // the former name of the cursor, still read
		if q.Has("cursor") {
			s.problem(w, r, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "after", Detail: "give cursor or after, not both"})
			return
		}
		cursor = q.Get("after")
	}
	limit, err := queryInt(r, "limit", 0)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if limit > webhooks.MaxEventsLimit || (q.Has("limit") && limit == 0) {
		s.problem(w, r, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "limit", Detail: "query parameter limit must be between 1 and 200"})
		return
	}
	list, err := s.svc.Webhooks.Events(r.Context(), accountID(r), cursor, int(limit))
	if fe := (*fiscal.Error)(nil); errors.As(err, &fe) && fe.Field == "cursor" && q.Has("after") {
		// The cursor came as after: the problem names what was sent.
		named := *fe
		named.Field = "after"
		err = &named
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if list.HasMore {
		next := url.Values{"cursor": {list.NextCursor}}
		if limit > 0 {
			next.Set("limit", strconv.FormatInt(limit, 10))
		}
		w.Header().Set("Link", `</v1/events?`+next.Encode()+`>; rel="next"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeResult(w, r, list, nil)
}

// getEvent: GET /v1/events/{id}, with its deliveries.
func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) {
	ev, err := s.svc.Webhooks.Event(r.Context(), accountID(r), r.PathValue("id"))
	w.Header().Set("Cache-Control", "no-store")
	s.writeResult(w, r, ev, err)
}

// postRedeliver: POST /v1/events/{id}/redeliver[?endpoint=<id>]. 202: the
// deliveries are scheduled, due now; a replay of the Idempotency-Key is the
// first answer (Idempotent-Replayed: true) and schedules nothing
// (webhooks.Service.RedeliverIdempotent). Any other parameter, or an empty
// endpoint, is a 400: a misspelt filter must not redeliver to every
// endpoint.
func (s *Server) postRedeliver(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	q := r.URL.Query()
	if err := onlyParams(q, "endpoint"); err != nil {
		s.problem(w, r, err)
		return
	}
	if q.Has("endpoint") && q.Get("endpoint") == "" {
		// An empty filter is not "every endpoint": that is the query
		// without it.
		s.problem(w, r, badRequestf("endpoint", "is empty; give an endpoint id, or no endpoint parameter to redeliver to every enabled endpoint"))
		return
	}
	res, err := s.svc.Webhooks.RedeliverIdempotent(r.Context(), accountID(r), id, q.Get("endpoint"), key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, err := json.Marshal(struct {
		EventID    string              `json:"eventId"`
		Deliveries []webhooks.Delivery `json:"deliveries"`
	}{id, res.Deliveries})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusAccepted, raw)
}
