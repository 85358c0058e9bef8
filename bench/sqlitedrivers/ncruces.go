//go:build ncruces

package main

import _ "github.com/ncruces/go-sqlite3/driver"

const driverName, driverLabel = "sqlite3", "ncruces"

func dsn(path string) string { return "file:" + path }
