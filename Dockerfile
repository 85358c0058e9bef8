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
# the context, build with --build-arg BUILDVCS=false and stamp it instead:
#   docker build --build-arg BUILDVCS=false --build-arg VERSION=v1.2.0 \
#     --build-arg REVISION=$(git rev-parse HEAD) --build-arg BUILD_TIME=$(git log -1 --format=%cI) \
#     --build-arg MODIFIED=$(test -z "$(git status --porcelain)" && echo false || echo true) -t wirebench .
# (wirebench --version prints them; docs/install.md.)
ARG BUILDVCS=auto
ARG VERSION= REVISION= BUILD_TIME= MODIFIED=
RUN CGO_ENABLED=0 go build -buildvcs=$BUILDVCS -trimpath \
    -ldflags="-s -w -X main.buildVersion=$VERSION -X main.buildRevision=$REVISION -X main.buildTime=$BUILD_TIME -X main.buildModified=$MODIFIED" \
    -o /wirebench ./cmd/wirebench

FROM scratch
COPY --from=build /wirebench /wirebench
# CA certificates, for https:// targets verified as usual.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# No /etc/passwd in scratch: a numeric non-root user.
USER 65532:65532
ENTRYPOINT ["/wirebench"]
