package host

import "fmt"

// Argument checks shared by every backend, made before any driver call.

func checkAlloc(backend string, size int64, c Caps) error {
	if size < 0 {
		return fmt.Errorf("%s: alloc size %d < 0", backend, size)
	}
	if size > c.MaxAllocBytes {
		return fmt.Errorf("%s: alloc %d bytes exceeds the device's max allocation %d bytes: %w", backend, size, c.MaxAllocBytes, ErrOutOfMemory)
	}
	return nil
}

func checkRange(backend string, off, n, size int64) error {
	if off < 0 || n < 0 || off+n > size {
		return fmt.Errorf("%s: range [%d, %d) outside buffer of %d bytes", backend, off, off+n, size)
	}
	return nil
}

// checkSub checks a view's offset and size (Device.Sub) against caps.
func checkSub(backend string, off, size int64, caps Caps) error {
	if size < 1 {
		return fmt.Errorf("%s: view of %d bytes, want at least 1", backend, size)
	}
	if caps.SubAlign <= 0 || off%caps.SubAlign != 0 {
		return fmt.Errorf("%s: view at offset %d, want a multiple of %d (Caps.SubAlign)", backend, off, caps.SubAlign)
	}
	return nil
}

func checkFill(backend string, off, size int64, pattern []byte) error {
	switch len(pattern) {
	case 1, 2, 4, 8:
	default:
		return fmt.Errorf("%s: fill pattern of %d bytes, want 1, 2, 4 or 8", backend, len(pattern))
	}
	if off%int64(len(pattern)) != 0 || size%int64(len(pattern)) != 0 {
		return fmt.Errorf("%s: fill offset %d and size %d must be multiples of the %d-byte pattern", backend, off, size, len(pattern))
	}
	return nil
}
