//go:build modernc

package main

import _ "modernc.org/sqlite"

const driverName, driverLabel = "sqlite", "modernc"

func dsn(path string) string { return "file:" + path }
