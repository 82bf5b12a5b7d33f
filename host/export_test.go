package host

// Internal names that the external tests (package host_test, which can
// import the kernel declarations of package host/kernels) use.
var (
	// SizeClass is the pool's size class of a request.
	SizeClass = sizeClass
	// VulkanTestTriFile is the internal Vulkan tests' own declaration of
	// tri_indices (vulkan_test.go).
	VulkanTestTriFile = vktTriFile
)

// SetNVCompilerOptions makes OpenCL devices that f accepts take NVIDIA's
// build options (nvCompilerOptions) until the returned func restores it.
func SetNVCompilerOptions(f func(Caps) bool) (restore func()) {
	old := nvCompilerOptions
	nvCompilerOptions = f
	return func() { nvCompilerOptions = old }
}
