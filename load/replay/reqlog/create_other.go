//go:build !unix

package reqlog

// noFollow: O_EXCL alone keeps Create off links where O_NOFOLLOW is not.
const noFollow = 0
