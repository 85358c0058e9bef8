package webbench

// Rebuild the page's script from ../browser (npm packages pinned by its
// package-lock.json; protoc for the generated protobuf-es code):
//
//go:generate sh -c "cd ../browser && npm ci --no-audit --no-fund --loglevel=error && npm run gen && npm run build"
