package httpapi_test

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/wirebench/wirebench/server"
)

// engine is the REST engine the tests' servers run on. TestMain runs every
// test once per engine, so each table (format pairs, errors, the
// adversarial corpus) is the parity proof of the fasthttp engine.
var engine string

var engineFlag = flag.String("engine", "", "run the tests on this REST engine only (nethttp or fasthttp); both when empty")

func TestMain(m *testing.M) {
	flag.Parse()
	engines := []string{server.EngineNetHTTP, server.EngineFastHTTP}
	// WIREBENCH_TEST_ENGINE does what -engine does for runners that cannot
	// pass test flags (gremlins: the mutated code is the shared core, which
	// one engine exercises as well as two, in half the time).
	if e := cmp.Or(*engineFlag, os.Getenv("WIREBENCH_TEST_ENGINE")); e != "" {
		engines = []string{e}
	}
	code := 0
	for _, e := range engines {
		engine = e
		// Printed so that a failure's output says which engine failed.
		fmt.Printf("=== engine %s\n", e)
		if c := m.Run(); c != 0 {
			fmt.Printf("--- FAIL: engine %s\n", e)
			code = c
		}
	}
	os.Exit(code)
}

// framingByEngine overrides framingCases' status where an engine answers
// raw framing differently before the API sees the request; 0 is "closes
// the connection without a reply". Everything else in every table is the
// same on both engines.
var framingByEngine = map[string]map[string]int{
	server.EngineFastHTTP: {
		// fasthttp reads the whole body before the handler; a chunked
		// body cut short by the client's half-close is an EOF, which it
		// treats as the client leaving (net/http's handler reads the
		// body itself and answers 400).
		"chunked, no last chunk": 0,
	},
}
