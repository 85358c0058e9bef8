# wirebench in a container: the static binary and nothing else.
#   docker build -t wirebench:latest .
# CGO_ENABLED=0: no libc in a scratch image (cmd/wirebench's
# TestNoCgoDependency keeps every dependency pure Go).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The git commit is stamped into the binary and into every result file
# (.git is in the context); from a git worktree, whose .git points outside
# the context, build with --build-arg BUILDVCS=false.
ARG BUILDVCS=auto
RUN CGO_ENABLED=0 go build -buildvcs=$BUILDVCS -trimpath -ldflags="-s -w" -o /wirebench ./cmd/wirebench

FROM scratch
COPY --from=build /wirebench /wirebench
# CA certificates, for https:// targets verified as usual.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# No /etc/passwd in scratch: a numeric non-root user.
USER 65532:65532
ENTRYPOINT ["/wirebench"]
