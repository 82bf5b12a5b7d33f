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
