module github.com/fiscal402/fiscal402

go 1.26.0

require (
	github.com/beevik/etree v1.8.1
	github.com/go-jose/go-jose/v4 v4.1.8
	github.com/klauspost/compress v1.20.4
	github.com/shopspring/decimal v1.6.0
	go.etcd.io/bbolt v1.5.0
	golang.org/x/mod v0.42.0
	golang.org/x/time v0.16.0
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
