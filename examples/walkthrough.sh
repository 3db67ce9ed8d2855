#!/usr/bin/env bash
# A new user's tour of a running fiscal402 server: every endpoint, with curl,
# printing each request and the interesting part of each answer.
#
# It starts nothing. Start a server first, for example:
#
#     FISCAL402_DEMO_KEY=sk_test_demo go run ./examples/server
#
# then, in another terminal:
#
#     BASE=http://127.0.0.1:8402 KEY=sk_test_demo examples/walkthrough.sh
#
# BASE  the server's base URL (default http://127.0.0.1:8402)
# KEY   the account's X-Service-Key (required)
# VERIFY=0 skips verifying a receipt with examples/verify-receipt (needs go)
#
# Needs bash, curl and python3 (Debian: curl python3). A step whose route the
# server does not list in its /openapi.json is skipped and said so. The script
# exits 1 if any answer has an unexpected status.
set -euo pipefail

BASE=${BASE:-http://127.0.0.1:8402}
BASE=${BASE%/}
KEY=${KEY:-}
if [ -z "$KEY" ]; then
  echo "walkthrough: set KEY to the account's X-Service-Key (the server prints the demo key on first start)" >&2
  exit 2
fi
for tool in curl python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "walkthrough: $tool is required" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
skipped=0
steps=0

bold() { if [ -t 1 ]; then printf '\n\033[1m%s\033[0m\n' "$*"; else printf '\n%s\n' "$*"; fi; }
say() { printf '  %s\n' "$*"; }

# json EXPR: evaluate a path like .a.b[0].c on the last answer's body; an
# absent member prints nothing.
json() {
  python3 - "$tmp/body" "$1" <<'PY'
import json, re, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
for part in re.findall(r'\.([A-Za-z0-9_.\-]+?)(?=\.|\[|$)|\[(\d+)\]|\["([^"]+)"\]', sys.argv[2]):
    key, idx, quoted = part
    try:
        v = v[int(idx)] if idx else v[quoted or key]
    except (KeyError, IndexError, TypeError):
        sys.exit(0)
print(json.dumps(v) if isinstance(v, (dict, list)) else v)
PY
}

# show [LINES]: pretty-print the last answer (JSON through python3 -m
# json.tool), at most LINES lines.
show() {
  local n=${1:-15}
  [ "${status:-}" != skip ] || return 0
  if python3 -m json.tool "$tmp/body" >"$tmp/pretty" 2>/dev/null; then
    head -n "$n" "$tmp/pretty" | sed 's/^/    /'
    [ "$(wc -l <"$tmp/pretty")" -le "$n" ] || say "    ..."
  else
    head -c 600 "$tmp/body" | sed 's/^/    /'
    echo
  fi
}

# served METHOD TEMPLATE: is the route in the server's OpenAPI document?
served() {
  python3 - "$tmp/openapi.json" "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if sys.argv[2].lower() in doc.get("paths", {}).get(sys.argv[3], {}) else 1)
PY
}

# call EXPECT METHOD PATH [TEMPLATE] [curl args...]: send a request, print
# it and its status; EXPECT is a |-separated list of statuses (4xx allowed).
# TEMPLATE is the route's path in the OpenAPI document when PATH has ids or a
# query, or "-" to send the request whether the route is documented or not.
call() {
  local expect=$1 method=$2 path=$3 template=$3
  shift 3
  if [ $# -gt 0 ] && { [ "${1#/}" != "$1" ] || [ "$1" = - ]; }; then template=$1; shift; fi
  steps=$((steps + 1))
  if [ "$template" != - ] && [ -s "$tmp/openapi.json" ] && ! served "$method" "$template"; then
    skipped=$((skipped + 1))
    say "SKIP $method $path: this server does not serve it (not in its /openapi.json)"
    : >"$tmp/body"
    status=skip
    return 0
  fi
  printf '  $ curl -X %s %s%s\n' "$method" "$BASE" "$path"
  status=$(curl -sS -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' -X "$method" "$BASE$path" "$@") || status=000
  local ok=no e
  IFS='|' read -ra wanted <<<"$expect"
  for e in "${wanted[@]}"; do
    case $e in
      4xx) [[ $status == 4?? ]] && ok=yes ;;
      *) [ "$status" = "$e" ] && ok=yes ;;
    esac
  done
  if [ $ok = yes ]; then
    say "-> $status"
  else
    failures=$((failures + 1))
    say "-> $status, expected $expect  <-- UNEXPECTED"
    show 20
  fi
}

header() { tr -d '\r' <"$tmp/headers" | awk -v h="$(echo "$1" | tr 'A-Z' 'a-z')" -F': ' 'tolower($1)==h {print $2}'; }
newhash() { python3 -c 'import secrets; print("0x" + secrets.token_hex(32))'; }

JSON=(-H 'Content-Type: application/json')
AUTH=(-H "X-Service-Key: $KEY")
run=$(python3 -c 'import secrets; print(secrets.token_hex(4))')

bold "0. Where am I? ($BASE)"
curl -sS -o "$tmp/openapi.json" "$BASE/openapi.json" || { echo "walkthrough: no server at $BASE" >&2; exit 2; }
call 200 GET /discover
show 12
call 200 GET /openapi.json
say "OpenAPI $(json .openapi), API version $(json .info.version), $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["paths"]))' "$tmp/body") paths"

bold "1. What does it support? (public documents, no key)"
call 200 GET /.well-known/service.json
say "capabilities:     $(json .capabilities)"
say "supported_chains: $(json .supported_chains)"
say "receipt_versions: $(json '.receipt_versions["1.0.0"].status') (1.0.0), $(json '.receipt_versions["2.0.0"].status') (2.0.0)"
say "custody: $(json .custody), mcp: $(json .mcp.status)"
etag=$(header ETag)
call 304 GET /.well-known/service.json -H "If-None-Match: $etag"
call 200 GET /.well-known/agent-card.json
say "agent card: $(json .name) $(json .version), interface $(json '.supportedInterfaces[0].protocolBinding')"
call 200 GET /v1/discovery
call 200 GET /v1/capabilities
say "vies_lookup: $(json '.capabilities[1].status'); ECB rates through $(json .fx.rates_through)"
call 200 GET /v1/pricing
say "fee now $(json .current_fee_bps) bps ($(json .beta.label)), standard $(json .standard.fee_bps) bps = $(json .standard.display_rate), collection $(json .collection.method)"
call 200 GET /v1/reliability
say "$(json .acknowledgement)"
call 200 GET /v1/preference
call 200 GET /v1/seller-value

bold "2. Will my corridor work? POST /v1/capabilities/check (key optional)"
check='{"seller_country":"IE","buyer_country":"DE","supply_type":"digital_service","buyer_type":"B2C","payment":{"protocol":"x402","network":"eip155:8453","asset":"USDC"}}'
call 200 POST /v1/capabilities/check "${JSON[@]}" -d "$check"
for aspect in event_support payment_support jurisdiction_representation determination_coverage receipt_eligibility; do
  say "$(printf '%-28s' "$aspect") $(json ".$aspect.status")"
done
say "regime $(json .determination_coverage.classification.regime) at $(json .determination_coverage.classification.ratePercent) % in $(json .determination_coverage.classification.taxingCountry)"
call 200 POST /v1/capabilities/check "${JSON[@]}" "${AUTH[@]}" -d "$check"
say "with my key, POST /settlements is $(json '.event_support.ingest[0].status') for this corridor"
call 200 POST /v1/capabilities/check "${JSON[@]}" -d '{"seller_country":"US","buyer_country":"US","payment":{"protocol":"mpp"}}'
say "US to US over MPP: payment $(json .payment_support.status), jurisdiction $(json .jurisdiction_representation.status)"
call 400 POST /v1/capabilities/check "${JSON[@]}" -d '{"sellerCountry":"IE"}'
say "$(json .code) at $(json .field): $(json .detail)"
call 401 POST /v1/capabilities/check "${JSON[@]}" -H 'X-Service-Key: sk_wrong' -d "$check"

bold "3. Try it in the sandbox (no production record; quota per agent and day)"
call 200 POST /v1/compliance/evaluate "${JSON[@]}" -d '{"seller":{"legalName":"Example API Inc.","country":"US"},"buyer":{"country":"DE","businessStatus":"B2C"},"supply":{"kind":"digital_service"},"amountUsdc":"11.90","currency":"USDC","date":"2026-04-10"}'
show 10
call '200|201' POST /sandbox/v1/simulate "${JSON[@]}" -d '{"amountUsdc":"11.90","txHash":"'"$(newhash)"'","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","consumerCountry":"DE"}'
show 10

bold "4. Record a settled payment: POST /settlements (key required)"
# settlement TX EXTRA: a settled 11.90 USDC payment on Base; EXTRA adds members.
settlement() {
  printf '{"amountUsdc":"%s","txHash":"%s","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"%s"%s}' \
    "${AMOUNT:-11.90}" "$1" "${NETWORK:-eip155:8453}" "$2"
}
tx=$(newhash)
call 201 POST /settlements "${JSON[@]}" "${AUTH[@]}" -H "Idempotency-Key: walkthrough-$run-1" -d "$(settlement "$tx" ',"consumerCountry":"DE"')"
id=$(json .id)
index=$(json .ledger.index)
say "record $id: $(json .reviewStatus), $(json .classification.regime) $(json .classification.taxCategoryCode) $(json .classification.ratePercent) % $(json .classification.taxingCountry)"
say "$(json .fx.amountUsdc) USDC = $(json .fx.grossEur) EUR gross = $(json .fx.netEur) net + $(json .fx.vatEur) VAT (ECB $(json .fx.usdPerEur.raw) of $(json .fx.usdPerEur.rateDate)); fee $(json .fee.bps) bps"
call 201 POST /settlements "${JSON[@]}" "${AUTH[@]}" -H "Idempotency-Key: walkthrough-$run-1" -d "$(settlement "$tx" ',"consumerCountry":"DE"')"
say "the same key and body again: Idempotent-Replayed: $(header Idempotent-Replayed)"
call 409 POST /settlements "${JSON[@]}" "${AUTH[@]}" -H "Idempotency-Key: walkthrough-$run-1" -d "$(AMOUNT=12.90 settlement "$tx" ',"consumerCountry":"DE"')"
say "the same key, another body: $(json .code)"
call 200 POST /settlements "${JSON[@]}" "${AUTH[@]}" -d "$(settlement "$tx" ',"consumerCountry":"DE"')"
say "the same (network, txHash) without an Idempotency-Key: the existing record $(json .id)"
call 401 POST /settlements "${JSON[@]}" -d "$(settlement "$tx" ',"consumerCountry":"DE"')"
say "no key: $(json .code), request_id $(json .request_id)"
call 201 POST /settlements "${JSON[@]}" "${AUTH[@]}" -d "$(settlement "$(newhash)" ',"consumerName":"Ann Example"')"
say "no consumerCountry: $(json .reviewStatus) ($(json '.reviewReasons[0].code')), never 0 % VAT"
call 201 POST /settlements "${JSON[@]}" "${AUTH[@]}" -d "$(settlement "$(newhash)" ',"consumerCountry":"DE","consumerVatNumber":"DE136695976"')"
say "a business buyer: $(json .reviewStatus) ($(json '.reviewReasons[0].code')): reverse charge only with a registry-confirmed number"
call 400 POST /settlements "${JSON[@]}" "${AUTH[@]}" -d '{"amountUsdc":11.9}'
say "$(json .code) at $(json .field): $(json .detail)"
call 422 POST /settlements "${JSON[@]}" "${AUTH[@]}" -d "$(NETWORK=eip155:137 settlement "$(newhash)" ',"consumerCountry":"DE"')"
say "$(json .code): $(json .detail)"

bold "5. Read it back (key required)"
call 200 GET "/settlements/$id" /settlements/{id} "${AUTH[@]}"
say "revision $(json .revision), receipt $(json .receipt.id)"
call 200 GET "/settlements/$id/ubl" /settlements/{id}/ubl "${AUTH[@]}"
say "UBL invoice, $(wc -c <"$tmp/body") bytes, ETag $(header ETag)"
call 404 GET /settlements/x402-00000000000000000000000000000000 /settlements/{id} "${AUTH[@]}"
call 200 GET "/settlements?limit=2" /settlements "${AUTH[@]}"
show 6

bold "6. Verify without trusting the service (public)"
call 200 GET "/v1/receipts/rcpt_$id" /v1/receipts/{id}
say "receipt $(json .id), spec $(json .spec), claims.review_status $(json .claims.review_status)"
call 200 GET /.well-known/jwks.json
say "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["keys"]))' "$tmp/body") receipt key(s)"
call 200 GET /.well-known/log-key
say "$(cat "$tmp/body")"
call 200 GET /v1/log/checkpoint
show 3
call 200 GET "/v1/log/proof/inclusion?index=$index" /v1/log/proof/inclusion
say "leaf $(json .index) in a tree of $(json .size): $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hashes"]))' "$tmp/body") hashes"
call 200 GET "/v1/log/proof/consistency?from=1" /v1/log/proof/consistency
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${VERIFY:-1}" != 0 ] && command -v go >/dev/null 2>&1 && [ -f "$root/examples/verify-receipt/main.go" ]; then
  say "\$ go run ./examples/verify-receipt -server $BASE rcpt_$id"
  steps=$((steps + 1))
  if (cd "$root" && go run ./examples/verify-receipt -server "$BASE" "rcpt_$id") >"$tmp/verify" 2>&1; then
    say "-> verified offline: $(head -n 1 "$tmp/verify")"
  else
    failures=$((failures + 1))
    say "-> NOT verified  <-- UNEXPECTED"
    sed 's/^/    /' "$tmp/verify"
  fi
else
  say "(go not found: verify with examples/verify-receipt, or receipt.Verify(receiptJSON, jwks, logKey) in Go)"
fi

bold "7. Global ingest: POST /v1/fiscal-events (key required)"
call '201|200' POST /v1/fiscal-events "${JSON[@]}" "${AUTH[@]}" -H "Idempotency-Key: walkthrough-$run-fe" -d '{"payment":{"amountUsdc":"5.00","txHash":"'"$(newhash)"'","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","asset":"USDC","scheme":"exact"},"seller":{"legalName":"Demo Digital Services Ltd","country":"IE"},"buyer":{"country":"JP","businessStatus":"B2C"},"supply":{"kind":"digital_service"}}'
show 10

bold "8. x402 ingest: POST /v1/x402/settlements (key required)"
call '201|200|4xx' POST /v1/x402/settlements "${JSON[@]}" "${AUTH[@]}" -d '{"settleResponse":{"success":true,"transaction":"'"$(newhash)"'","network":"eip155:8453","payer":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"},"paymentRequirements":{"scheme":"exact","network":"eip155:8453","amount":"11900000","asset":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60},"paymentPayload":{"x402Version":2},"buyer":{"consumerCountry":"DE"}}'
show 8

bold "9. Webhooks (key required)"
call '201|200' POST /v1/webhook-endpoints "${JSON[@]}" "${AUTH[@]}" -d '{"url":"https://hooks.example.net/fiscal402"}'
endpoint=$(json .id)
[ "$status" = skip ] || say "endpoint $endpoint; its secret is shown once: $(json .secret | cut -c1-12)..."
call 200 GET /v1/webhook-endpoints "${AUTH[@]}"
call 200 GET "/v1/events?after=0&limit=2" /v1/events "${AUTH[@]}"
event=$(json '.data[0].id')
[ "$status" = skip ] || say "first event: $event $(json '.data[0].type')"
if [ -n "${event:-}" ]; then
  call '200|202' POST "/v1/events/$event/redeliver" /v1/events/{id}/redeliver "${AUTH[@]}"
fi
if [ -n "${endpoint:-}" ]; then
  call '200|204' DELETE "/v1/webhook-endpoints/$endpoint" /v1/webhook-endpoints/{id} "${AUTH[@]}"
fi

bold "10. The OSS return, its records and the export (key required)"
call 200 GET "/v1/returns/oss?period=2026-Q2" /v1/returns/oss "${AUTH[@]}"
if [ "$status" = 200 ]; then
  cp "$tmp/body" "$tmp/return.json"
  say "return $(json .return.period) ($(json .return.status)), OSS number $(json .return.identification.number) in $(json .return.identification.memberStateOfIdentification)"
  say "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["return"]; print("; ".join("%s %s %%: %s USDC, VAT %s EUR (invoices %s) from ledger %s" % (l["memberState"], l["ratePercent"], l["amountUsdc"], l.get("vatEur") or "-", l["invoiceVatEur"], l["ledgerIndexes"][:5]) for l in r["lines"][:4]))' "$tmp/return.json")"
  say "pending, excluded: $(json .return.excluded.pending.records); signed: $(json .jws | cut -c1-24)..."
fi
call 200 GET "/v1/returns/oss?period=2026-Q2&format=csv" /v1/returns/oss "${AUTH[@]}"
[ "$status" = skip ] || head -n 3 "$tmp/body" | sed 's/^/    /'
call 200 GET "/v1/returns/oss/records?period=2026-Q2&memberState=DE" /v1/returns/oss/records "${AUTH[@]}"
say "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["data"]))' "$tmp/body" 2>/dev/null) German supplies, each with its Art. 63c items and what is missing"
call 200 GET "/settlements/export?format=jsonl" /settlements/export "${AUTH[@]}"
[ "$status" = skip ] || { cp "$tmp/body" "$tmp/export.jsonl"; say "$(wc -l <"$tmp/export.jsonl") records exported, one JSON line each"; }
call 400 GET "/v1/returns/oss?period=2026-Q5" /v1/returns/oss "${AUTH[@]}"
say "$(json .code) at $(json .field): $(json .detail)"
if [ "${VERIFY:-1}" != 0 ] && command -v go >/dev/null 2>&1 && [ -f "$tmp/return.json" ] && [ -f "$tmp/export.jsonl" ] && [ -f "$root/examples/audit/main.go" ]; then
  mkdir -p "$tmp/receipts"
  for rid in $(python3 -c 'import json,sys; [print(json.loads(l)["receiptId"]) for l in open(sys.argv[1]) if l.strip()]' "$tmp/export.jsonl"); do
    curl -sS -o "$tmp/receipts/$rid.json" "$BASE/v1/receipts/$rid"
  done
  curl -sS -o "$tmp/jwks.json" "$BASE/.well-known/jwks.json"
  curl -sS -o "$tmp/log-key.txt" "$BASE/.well-known/log-key"
  say "\$ go run ./examples/audit return return.json --receipts receipts/ --jwks jwks.json --log-key-file log-key.txt"
  steps=$((steps + 1))
  if (cd "$root" && go run ./examples/audit return "$tmp/return.json" --receipts "$tmp/receipts" --jwks "$tmp/jwks.json" --log-key-file "$tmp/log-key.txt") >"$tmp/audit" 2>&1; then
    sed 's/^/    /' "$tmp/audit"
  else
    failures=$((failures + 1))
    say "-> return NOT verified  <-- UNEXPECTED"
    sed 's/^/    /' "$tmp/audit"
  fi
fi

bold "11. Errors are problem documents"
call 404 GET /no/such/path -
say "$(header Content-Type): $(json .code), request_id $(json .request_id) = X-Request-Id $(header X-Request-Id)"
call 405 DELETE /v1/pricing -
say "$(json .code)"

bold "Done: $steps steps, $skipped skipped, $failures unexpected"
[ "$failures" -eq 0 ]
