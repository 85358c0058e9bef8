//go:build !race

package fastapi

// raceEnabled: see race_test.go.
const raceEnabled = false
