package host

/*
#cgo CFLAGS: -DCL_TARGET_OPENCL_VERSION=120
#include <stdlib.h>
#include "clshim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"unsafe"
)

// Our own OpenCL binding, over the wrappers in clshim.c. It replaced
// github.com/jgillich/go-opencl (issue #30): that package's cgo files
// include the OpenCL headers without CL_TARGET_OPENCL_VERSION, so every
// program importing accel printed the headers' pragma warning 13 times in
// its first build, and no setting in this module reaches a dependency's
// cgo flags. The binding covers only the calls opencl.go makes; handles
// are opaque C pointers, released explicitly (no finalizers).

// clStatus is a cl_int status other than CL_SUCCESS.
type clStatus int

// clStatusNames names the statuses a driver returns most often.
var clStatusNames = map[clStatus]string{
	-1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE", -3: "CL_COMPILER_NOT_AVAILABLE",
	-4: "CL_MEM_OBJECT_ALLOCATION_FAILURE", -5: "CL_OUT_OF_RESOURCES", -6: "CL_OUT_OF_HOST_MEMORY",
	-7: "CL_PROFILING_INFO_NOT_AVAILABLE", -11: "CL_BUILD_PROGRAM_FAILURE", -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
	-30: "CL_INVALID_VALUE", -33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT", -36: "CL_INVALID_COMMAND_QUEUE",
	-38: "CL_INVALID_MEM_OBJECT", -42: "CL_INVALID_BINARY", -43: "CL_INVALID_BUILD_OPTIONS", -44: "CL_INVALID_PROGRAM",
	-45: "CL_INVALID_PROGRAM_EXECUTABLE", -46: "CL_INVALID_KERNEL_NAME", -48: "CL_INVALID_KERNEL", -49: "CL_INVALID_ARG_INDEX",
	-50: "CL_INVALID_ARG_VALUE", -51: "CL_INVALID_ARG_SIZE", -52: "CL_INVALID_KERNEL_ARGS", -54: "CL_INVALID_WORK_GROUP_SIZE",
	-58: "CL_INVALID_EVENT", -61: "CL_INVALID_BUFFER_SIZE", -1001: "CL_PLATFORM_NOT_FOUND_KHR",
}

func (s clStatus) Error() string {
	if n, ok := clStatusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, int(s))
	}
	return fmt.Sprintf("OpenCL status %d", int(s))
}

// outOfMemory reports whether s is one of the statuses clErr maps to
// ErrOutOfMemory.
func (s clStatus) outOfMemory() bool { return s == -4 || s == -5 || s == -6 }

// clCheck turns a status into an error (nil for CL_SUCCESS).
func clCheck(st C.int) error {
	if st == 0 {
		return nil
	}
	return clStatus(st)
}

// Info parameters (cl.h) that the backend queries.
const (
	clPlatformVersion      = 0x0901
	clPlatformName         = 0x0902
	clDeviceType           = 0x1000
	clDeviceComputeUnits   = 0x1002
	clDeviceMaxWGSize      = 0x1004
	clDeviceMaxAlloc       = 0x1010
	clDeviceBaseAlign      = 0x1019
	clDeviceGlobalMem      = 0x101F
	clDeviceLocalMem       = 0x1023
	clDeviceTimerRes       = 0x1025
	clDeviceAvailable      = 0x1027
	clDeviceCompilerAvail  = 0x1028
	clDeviceName           = 0x102B
	clDeviceVendor         = 0x102C
	clDriverVersion        = 0x102D
	clDeviceVersion        = 0x102F
	clDeviceExtensions     = 0x1030
	clDeviceDoubleFPConfig = 0x1032
	clDeviceHostUnified    = 0x1035
	clDeviceTypeCPU        = 1 << 1
	clDeviceTypeGPU        = 1 << 2
)

// clPlatforms lists the platform handles.
func clPlatforms() ([]unsafe.Pointer, error) {
	var n C.uint
	if err := clCheck(C.acl_platforms(nil, 0, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, clStatus(-1001)
	}
	buf := C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(unsafe.Pointer(nil))))
	defer C.free(buf)
	if err := clCheck(C.acl_platforms((*unsafe.Pointer)(buf), n, &n)); err != nil {
		return nil, err
	}
	return append([]unsafe.Pointer(nil), unsafe.Slice((*unsafe.Pointer)(buf), int(n))...), nil
}

// clDevices lists the device handles of a platform.
func clDevices(platform unsafe.Pointer) ([]unsafe.Pointer, error) {
	var n C.uint
	if err := clCheck(C.acl_devices(platform, nil, 0, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	buf := C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(unsafe.Pointer(nil))))
	defer C.free(buf)
	if err := clCheck(C.acl_devices(platform, (*unsafe.Pointer)(buf), n, &n)); err != nil {
		return nil, err
	}
	return append([]unsafe.Pointer(nil), unsafe.Slice((*unsafe.Pointer)(buf), int(n))...), nil
}

// clInfo reads an info parameter's bytes through query (a platform or
// device info call).
func clInfo(query func(size C.size_t, buf unsafe.Pointer, n *C.size_t) C.int) ([]byte, error) {
	var n C.size_t
	if err := clCheck(query(0, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	buf := C.malloc(n)
	defer C.free(buf)
	if err := clCheck(query(n, buf, nil)); err != nil {
		return nil, err
	}
	return C.GoBytes(buf, C.int(n)), nil
}

// clPlatformString reads a string parameter of a platform ("" on error).
func clPlatformString(p unsafe.Pointer, param uint) string {
	b, _ := clInfo(func(size C.size_t, buf unsafe.Pointer, n *C.size_t) C.int {
		return C.acl_platform_info(p, C.uint(param), size, buf, n)
	})
	return strings.TrimRight(string(b), "\x00")
}

// clDeviceInfo reads a parameter of a device.
func clDeviceInfo(d unsafe.Pointer, param uint) ([]byte, error) {
	return clInfo(func(size C.size_t, buf unsafe.Pointer, n *C.size_t) C.int {
		return C.acl_device_info(d, C.uint(param), size, buf, n)
	})
}

// clDeviceString reads a string parameter of a device ("" on error).
func clDeviceString(d unsafe.Pointer, param uint) string {
	b, _ := clDeviceInfo(d, param)
	return strings.TrimRight(string(b), "\x00")
}

// clDeviceUint reads an integer parameter of a device (cl_uint, cl_bool,
// size_t, cl_ulong or a bitfield, by its size), or an error.
func clDeviceUint(d unsafe.Pointer, param uint) (uint64, error) {
	b, err := clDeviceInfo(d, param)
	if err != nil {
		return 0, err
	}
	switch len(b) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(b)), nil
	case 8:
		return binary.NativeEndian.Uint64(b), nil
	}
	return 0, fmt.Errorf("device info 0x%x: %d bytes", param, len(b))
}

// clBuildLog returns a program's build log for a device, trimmed, without
// the lines of benignBuildNote.
func clBuildLog(prog, dev unsafe.Pointer) string {
	b, _ := clInfo(func(size C.size_t, buf unsafe.Pointer, n *C.size_t) C.int {
		return C.acl_build_log(prog, dev, size, (*C.char)(buf), n)
	})
	return cleanBuildLog(string(b))
}

// benignBuildNote matches the build-log lines a driver writes for every
// program, which say nothing about the source: NVIDIA's OpenCL (driver
// 580 on the H200) notes for each kernel that it overrides a noinline
// attribute (none in our sources: its own).
var benignBuildNote = regexp.MustCompile(`^\(\): Warning: Function \w+ is a kernel, so overriding noinline attribute\. The function may be inlined when called\.$`)

// cleanBuildLog trims a build log and drops its benignBuildNote lines.
func cleanBuildLog(s string) string {
	lines := strings.Split(strings.TrimSpace(strings.TrimRight(s, "\x00")), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !benignBuildNote.MatchString(strings.TrimSpace(l)) {
			kept = append(kept, l)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}
