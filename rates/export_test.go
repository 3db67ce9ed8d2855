package rates

// RetryRateTableEvery is retryRateTableEvery, for a test that cannot wait
// a minute for a replica's next walk.
var RetryRateTableEvery = retryRateTableEvery
