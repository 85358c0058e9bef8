//go:build mattn

package main

import _ "github.com/mattn/go-sqlite3"

const driverName, driverLabel = "sqlite3", "mattn"

func dsn(path string) string { return "file:" + path }
