//go:build ignore

// gen_main writes the files generated from the kernel declarations
// (kernels.Generated): run it with `go generate ./host/kernels`.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/accelkern/accel/host/kernels"
)

func main() {
	files, err := kernels.Generated()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// go generate runs in host/kernels; paths are from the repository root.
	root := filepath.Join("..", "..")
	for path, data := range files {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
