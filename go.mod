module github.com/fiscal402/fiscal402

go 1.26.0

require (
	github.com/beevik/etree v1.8.1
	github.com/chromedp/chromedp v0.23.0
	github.com/go-jose/go-jose/v4 v4.1.8
	github.com/shopspring/decimal v1.6.0
	go.etcd.io/bbolt v1.5.0
	golang.org/x/mod v0.42.0
	golang.org/x/time v0.16.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
