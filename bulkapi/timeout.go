package bulkapi

import "os"

// errTimeout is what a read past its deadline returns.
var errTimeout = os.ErrDeadlineExceeded
