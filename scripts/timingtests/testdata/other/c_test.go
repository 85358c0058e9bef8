package other

import "testing"

// TestViaHelper shares its name with a timing test of ../pkg but reaches
// no timing check: go test -skip would skip it here too.
func TestViaHelper(t *testing.T) {}
