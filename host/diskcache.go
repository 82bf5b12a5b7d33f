package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
)

// diskCache keeps compiled kernels across processes: one file per key (a
// digest of everything that changes the binary: preprocessed source,
// options, device, driver version), under os.UserCacheDir()/accel/BACKEND
// or $ACCEL_CACHE_DIR/BACKEND; ACCEL_DISK_CACHE=0 turns it off. Files are
// written to a temporary name and renamed, so a reader never sees half a
// file, and each carries the SHA-256 of its payload, so a corrupt or
// truncated entry is never handed to a driver: it is removed and the
// kernel rebuilt from source (and stored again).
//
// It is used where it was measured to pay: OpenCL program binaries (PoCL
// 3.1 on this project's CI machine: a warm source build of the scatter
// program takes ~140 ms, PoCL's own kernel cache included; loading its
// binary, 2-12 ms; a fresh process's first scatter_reduce, 112 -> 55 ms).
// The price is paid once per machine and program: to serialize a binary
// PoCL compiles every kernel of the program (~1.4 s for the scatter
// program's nine entries), which is why PoCL no longer stores
// (storesBinaries in opencl.go). Vulkan pipelines have none: lavapipe (Mesa
// 22.3) builds its pipelines as fast with its own cache warm as cold
// (~30 ms each), and Mesa 25's lavapipe keeps nothing in a VkPipelineCache
// (tried: 86 bytes of data after seven pipelines, and no faster); what
// made its pipelines slow was their modules' size (FileDecl.ModulePerEntry).
// A GPU driver is yet to be measured.
type diskCache struct {
	dir string
}

const diskCacheMagic = "accel-cache-1\n"

// openDiskCache returns the backend's disk cache, or nil when it is
// turned off or no cache directory is known.
func openDiskCache(backend string) *diskCache {
	if os.Getenv("ACCEL_DISK_CACHE") == "0" {
		return nil
	}
	base := os.Getenv("ACCEL_CACHE_DIR")
	if base == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		base = filepath.Join(dir, "accel")
	}
	return &diskCache{dir: filepath.Join(base, backend)}
}

func (c *diskCache) path(key string) string { return filepath.Join(c.dir, key+".bin") }

// load returns the payload stored for key, if a whole and intact one is
// there; a damaged entry is removed.
func (c *diskCache) load(key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	head := len(diskCacheMagic) + sha256.Size + 8
	ok := len(data) >= head && string(data[:len(diskCacheMagic)]) == diskCacheMagic
	var payload []byte
	if ok {
		sum := data[len(diskCacheMagic) : len(diskCacheMagic)+sha256.Size]
		n := binary.LittleEndian.Uint64(data[head-8 : head])
		payload = data[head:]
		got := sha256.Sum256(payload)
		ok = uint64(len(payload)) == n && bytes.Equal(sum, got[:])
	}
	if !ok {
		os.Remove(c.path(key))
		return nil, false
	}
	return payload, true
}

// remove drops key's entry.
func (c *diskCache) remove(key string) {
	if c != nil {
		os.Remove(c.path(key))
	}
}

// store writes payload for key atomically; failures are ignored (the
// cache is an optimization).
func (c *diskCache) store(key string, payload []byte) {
	if c == nil || len(payload) == 0 {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(c.dir, key+".*.tmp")
	if err != nil {
		return
	}
	sum := sha256.Sum256(payload)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(payload)))
	var buf bytes.Buffer
	buf.WriteString(diskCacheMagic)
	buf.Write(sum[:])
	buf.Write(n[:])
	buf.Write(payload)
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path(key))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
