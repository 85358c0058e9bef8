//go:build !race

package streamapi_test

// raceEnabled: see race_test.go.
const raceEnabled = false
