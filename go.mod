module github.com/wirebench/wirebench

go 1.26
