package study

import "errors"

func noFiles(name string) ([]byte, error) { return nil, errors.New("no such file (test)") }
