// Command main is what an integrator writes against the Go client that
// oapi-codegen generates from the served OpenAPI document.
// .ci/oapi-client.sh copies it into a scratch module beside the generated
// client, compiles it and runs it against the real server: it records a
// settlement and reads it back through the typed list, so a change that
// loosens the document's types (list items as interface{}, dates as plain
// strings) breaks CI.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"fiscal402-client-check/client"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "oapi client:", err)
		os.Exit(1)
	}
}

func run(base, key string) error {
	ctx := context.Background()
	c, err := client.NewClientWithResponses(base)
	if err != nil {
		return err
	}
	auth := func(_ context.Context, r *http.Request) error { r.Header.Set("X-Service-Key", key); return nil }
	country := "DE"
	body := client.CreateSettlementJSONRequestBody{
		AmountUsdc:      "11.90",
		TxHash:          "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
		Timestamp:       time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC),
		PayerWallet:     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		ReceiverWallet:  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network:         "eip155:8453",
		ConsumerCountry: &country,
	}
	created, err := c.CreateSettlementWithResponse(ctx, &client.CreateSettlementParams{}, body, auth)
	if err != nil {
		return err
	}
	if created.JSON201 == nil {
		return fmt.Errorf("create: %d %s", created.StatusCode(), created.Body)
	}
	limit := 10
	page, err := c.ListSettlementsWithResponse(ctx, &client.ListSettlementsParams{Limit: &limit}, auth)
	if err != nil {
		return err
	}
	if page.JSON200 == nil || len(page.JSON200.Data) == 0 {
		return fmt.Errorf("list: %d %s", page.StatusCode(), page.Body)
	}
	var rec client.Record = page.JSON200.Data[0] // typed: not interface{}
	if rec.Id != created.JSON201.Id || rec.ReviewStatus != client.RecordReviewStatusPROCESSED ||
		rec.Classification.Regime == nil || *rec.Classification.Regime != client.OSSB2C || rec.Fx.GrossEur == nil {
		return fmt.Errorf("the listed record %+v is not the created one", rec)
	}
	fmt.Printf("typed list: %s %s %s %s EUR, created %s\n", rec.Id, rec.ReviewStatus, *rec.Classification.Regime, *rec.Fx.GrossEur, rec.CreatedAt.Format(time.RFC3339))
	return nil
}
