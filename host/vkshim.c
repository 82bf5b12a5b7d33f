/* vkshim.c: see vkshim.h for why this shim exists. */
#include "vkshim.h"
#include "clshim.h" /* acl_huge_alloc, acl_huge_free: plain C, no OpenCL */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

/* HUGE_SPAN is the smallest buffer vks_alloc imports (import_alloc), and
 * the alignment of acl_huge_alloc's memory. */
#define HUGE_SPAN (2u << 20)

static void *libvulkan;
static PFN_vkGetInstanceProcAddr gipa;

int vks_load(void) {
	if (gipa) {
		return 0;
	}
	libvulkan = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!libvulkan) {
		libvulkan = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
	}
	if (!libvulkan) {
		return -1;
	}
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(libvulkan, "vkGetInstanceProcAddr");
	return gipa ? 0 : -2;
}

void *vks_get_instance_proc_addr(void) { return (void *)gipa; }

/* ---- instance and its validation-message sink ---- */

struct vks_instance {
	VkInstance inst;
	VkDebugUtilsMessengerEXT messenger;
	pthread_mutex_t mu;
	size_t len;
	int count;
	char buf[65536];
};

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
	VkDebugUtilsMessageTypeFlagsEXT types, const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
	(void)types;
	vks_instance *vi = user;
	if (!vi) {
		return VK_FALSE;
	}
	pthread_mutex_lock(&vi->mu);
	vi->count++;
	if (vi->len < sizeof(vi->buf) - 1) {
		int n = snprintf(vi->buf + vi->len, sizeof(vi->buf) - vi->len, "[%s] %s\n",
			(sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
			data && data->pMessage ? data->pMessage : "(no message)");
		if (n > 0) {
			vi->len += (size_t)n;
			if (vi->len >= sizeof(vi->buf)) {
				vi->len = sizeof(vi->buf) - 1;
			}
		}
	}
	pthread_mutex_unlock(&vi->mu);
	/* An error skips the call it reports (the Khronos layer honours a
	 * true return): an invalid command never reaches the driver, where
	 * it is undefined behaviour. The op still fails with ErrValidation,
	 * from the recorded message. */
	return (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? VK_TRUE : VK_FALSE;
}

int vks_take_messages(vks_instance *vi, char *buf, int len) {
	pthread_mutex_lock(&vi->mu);
	int n = vi->count;
	if (len > 0) {
		size_t c = vi->len < (size_t)(len - 1) ? vi->len : (size_t)(len - 1);
		memcpy(buf, vi->buf, c);
		buf[c] = 0;
	}
	vi->len = 0;
	vi->count = 0;
	pthread_mutex_unlock(&vi->mu);
	return n;
}

static int has_layer(const char *name) {
	PFN_vkEnumerateInstanceLayerProperties f =
		(PFN_vkEnumerateInstanceLayerProperties)gipa(NULL, "vkEnumerateInstanceLayerProperties");
	uint32_t n = 0;
	if (!f || f(&n, NULL) != VK_SUCCESS || n == 0) {
		return 0;
	}
	VkLayerProperties *p = calloc(n, sizeof *p);
	int found = 0;
	if (p && f(&n, p) == VK_SUCCESS) {
		for (uint32_t i = 0; i < n; i++) {
			found |= strcmp(p[i].layerName, name) == 0;
		}
	}
	free(p);
	return found;
}

/* The anchor: one instance without layers, created before the process's
 * first instance and never destroyed, so the loader never unloads the
 * drivers (it does when the last instance goes). On an NVIDIA H200 every
 * vkCreateInstance of a process failed with VK_ERROR_INCOMPATIBLE_DRIVER
 * once eleven tests had each opened and closed their devices: NVIDIA's
 * driver does not load again after a few unloads. A failed anchor leaves
 * none (the instance that follows reports the error). */
static pthread_once_t anchor_once = PTHREAD_ONCE_INIT;
static VkInstance anchor;

static void make_anchor(void) {
	VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
	app.pApplicationName = "accel";
	app.apiVersion = VK_API_VERSION_1_2;
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ci.pApplicationInfo = &app;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
	if (create && create(&ci, NULL, &anchor) != VK_SUCCESS) {
		anchor = VK_NULL_HANDLE;
	}
}

int vks_create_instance(int validation, vks_instance **out, char *err, int errlen) {
	*out = NULL;
	if (vks_load() != 0) {
		snprintf(err, errlen, "cannot load libvulkan.so.1 (install libvulkan1 and a driver such as mesa-vulkan-drivers)");
		return -1;
	}
	pthread_once(&anchor_once, make_anchor);
	const char *layers[1] = {"VK_LAYER_KHRONOS_validation"};
	const char *exts[1] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
	if (validation && !has_layer(layers[0])) {
		snprintf(err, errlen, "validation requested but VK_LAYER_KHRONOS_validation is not installed (vulkan-validationlayers)");
		return -2;
	}
	vks_instance *vi = calloc(1, sizeof *vi);
	if (!vi) {
		snprintf(err, errlen, "out of host memory");
		return -1;
	}
	pthread_mutex_init(&vi->mu, NULL);
	VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
	app.pApplicationName = "accel";
	app.apiVersion = VK_API_VERSION_1_2;
	VkDebugUtilsMessengerCreateInfoEXT dbg = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
	dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
	dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
		VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
	dbg.pfnUserCallback = debug_cb;
	dbg.pUserData = vi;
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ci.pApplicationInfo = &app;
	if (validation) {
		ci.enabledLayerCount = 1;
		ci.ppEnabledLayerNames = layers;
		ci.enabledExtensionCount = 1;
		ci.ppEnabledExtensionNames = exts;
		ci.pNext = &dbg; /* also reports during vkCreateInstance/vkDestroyInstance */
	}
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
	VkResult r = create(&ci, NULL, &vi->inst);
	if (r != VK_SUCCESS) {
		snprintf(err, errlen, "vkCreateInstance: VkResult %d", r);
		vks_free_instance(vi);
		return r;
	}
	if (validation) {
		PFN_vkCreateDebugUtilsMessengerEXT cm =
			(PFN_vkCreateDebugUtilsMessengerEXT)gipa(vi->inst, "vkCreateDebugUtilsMessengerEXT");
		r = cm ? cm(vi->inst, &dbg, NULL, &vi->messenger) : VK_ERROR_EXTENSION_NOT_PRESENT;
		if (r != VK_SUCCESS) {
			snprintf(err, errlen, "vkCreateDebugUtilsMessengerEXT: VkResult %d", r);
			vks_destroy_instance(vi);
			vks_free_instance(vi);
			return r;
		}
	}
	*out = vi;
	return 0;
}

void *vks_vk_instance(vks_instance *vi) { return (void *)vi->inst; }

void vks_destroy_instance(vks_instance *vi) {
	if (!vi || !vi->inst) {
		return;
	}
	if (vi->messenger != VK_NULL_HANDLE) {
		PFN_vkDestroyDebugUtilsMessengerEXT dm =
			(PFN_vkDestroyDebugUtilsMessengerEXT)gipa(vi->inst, "vkDestroyDebugUtilsMessengerEXT");
		if (dm) {
			dm(vi->inst, vi->messenger, NULL);
		}
		vi->messenger = VK_NULL_HANDLE;
	}
	PFN_vkDestroyInstance di = (PFN_vkDestroyInstance)gipa(vi->inst, "vkDestroyInstance");
	di(vi->inst, NULL);
	vi->inst = NULL;
}

void vks_free_instance(vks_instance *vi) {
	if (!vi) {
		return;
	}
	pthread_mutex_destroy(&vi->mu);
	free(vi);
}

/* ---- queries ---- */

static int has_device_ext(VkInstance inst, VkPhysicalDevice pd, const char *name) {
	PFN_vkEnumerateDeviceExtensionProperties f =
		(PFN_vkEnumerateDeviceExtensionProperties)gipa(inst, "vkEnumerateDeviceExtensionProperties");
	uint32_t n = 0;
	if (f(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) {
		return 0;
	}
	VkExtensionProperties *p = calloc(n, sizeof *p);
	int found = 0;
	if (p && f(pd, NULL, &n, p) == VK_SUCCESS) {
		for (uint32_t i = 0; i < n; i++) {
			found |= strcmp(p[i].extensionName, name) == 0;
		}
	}
	free(p);
	return found;
}

static int compute_family(VkInstance inst, VkPhysicalDevice pd, uint32_t *fam, uint32_t *ts_bits) {
	PFN_vkGetPhysicalDeviceQueueFamilyProperties f =
		(PFN_vkGetPhysicalDeviceQueueFamilyProperties)gipa(inst, "vkGetPhysicalDeviceQueueFamilyProperties");
	uint32_t n = 0;
	f(pd, &n, NULL);
	VkQueueFamilyProperties *p = calloc(n ? n : 1, sizeof *p);
	f(pd, &n, p);
	int found = 0;
	/* Prefer a compute-only family (async compute), else any with compute. */
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			VkQueueFlags fl = p[i].queueFlags;
			if ((fl & VK_QUEUE_COMPUTE_BIT) && (pass == 1 || !(fl & VK_QUEUE_GRAPHICS_BIT))) {
				*fam = i;
				*ts_bits = p[i].timestampValidBits;
				found = 1;
				break;
			}
		}
	}
	free(p);
	return found;
}

int vks_query(vks_instance *vi, void *phys, vks_caps *out) {
	VkInstance inst = vi->inst;
	VkPhysicalDevice pd = (VkPhysicalDevice)phys;
	memset(out, 0, sizeof *out);
	PFN_vkGetPhysicalDeviceProperties gp = (PFN_vkGetPhysicalDeviceProperties)gipa(inst, "vkGetPhysicalDeviceProperties");
	PFN_vkGetPhysicalDeviceFeatures gf = (PFN_vkGetPhysicalDeviceFeatures)gipa(inst, "vkGetPhysicalDeviceFeatures");
	VkPhysicalDeviceProperties base;
	gp(pd, &base);
	VkPhysicalDeviceFeatures f10;
	gf(pd, &f10);
	out->api_version = base.apiVersion;
	out->shader_int64 = f10.shaderInt64;
	out->shader_float64 = f10.shaderFloat64;
	uint32_t fam;
	out->has_compute_queue = compute_family(inst, pd, &fam, &out->timestamp_valid_bits);
	uint32_t major = VK_API_VERSION_MAJOR(base.apiVersion), minor = VK_API_VERSION_MINOR(base.apiVersion);
	if (major == 1 && minor < 1) {
		return 0; /* no vkGetPhysicalDeviceProperties2 in core 1.0 */
	}
	int v12 = major > 1 || minor >= 2;
	PFN_vkGetPhysicalDeviceProperties2 gp2 = (PFN_vkGetPhysicalDeviceProperties2)gipa(inst, "vkGetPhysicalDeviceProperties2");
	PFN_vkGetPhysicalDeviceFeatures2 gf2 = (PFN_vkGetPhysicalDeviceFeatures2)gipa(inst, "vkGetPhysicalDeviceFeatures2");
	if (!gp2 || !gf2) {
		return 0;
	}
	/* VkPhysicalDeviceDriverProperties and the float controls are core in
	 * 1.2 only. */
	VkPhysicalDeviceFloatControlsProperties fc = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
	VkPhysicalDeviceDriverProperties drv = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &fc};
	VkPhysicalDeviceSubgroupProperties sub = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, v12 ? &drv : NULL};
	/* Subgroup size control: core in 1.3, else the extension; chained only
	 * where the device knows it. */
	VkPhysicalDeviceSubgroupSizeControlProperties ssc = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES, &sub};
	int has_ssc = major > 1 || minor >= 3 || has_device_ext(inst, pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
	VkPhysicalDeviceMaintenance3Properties m3 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, has_ssc ? (void *)&ssc : (void *)&sub};
	VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m3};
	gp2(pd, &p2);
	/* the compute units, where a vendor extension tells: NVIDIA's SMs,
	 * AMD's compute units (engines x arrays x units per array) */
	if (has_device_ext(inst, pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
		VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
		VkPhysicalDeviceProperties2 q2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm};
		gp2(pd, &q2);
		out->compute_units = sm.shaderSMCount;
	} else if (has_device_ext(inst, pd, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
		VkPhysicalDeviceShaderCorePropertiesAMD sc = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
		VkPhysicalDeviceProperties2 q2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sc};
		gp2(pd, &q2);
		out->compute_units = sc.shaderEngineCount * sc.shaderArraysPerEngineCount * sc.computeUnitsPerShaderArray;
	}
	if (v12) {
		snprintf(out->driver_name, sizeof out->driver_name, "%s", drv.driverName);
		snprintf(out->driver_info, sizeof out->driver_info, "%s", drv.driverInfo);
		out->preserve32 = fc.shaderSignedZeroInfNanPreserveFloat32;
		out->preserve64 = fc.shaderSignedZeroInfNanPreserveFloat64;
		out->denorm32 = fc.shaderDenormPreserveFloat32;
		out->denorm64 = fc.shaderDenormPreserveFloat64;
	}
	out->subgroup_size = sub.subgroupSize;
	out->subgroup_fixed = has_ssc && ssc.minSubgroupSize == ssc.maxSubgroupSize && ssc.minSubgroupSize == sub.subgroupSize;
	out->subgroup_arith = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
		(sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) &&
		(sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
	out->subgroup_ballot = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
		(sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) &&
		(sub.supportedOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT);
	out->max_alloc = m3.maxMemoryAllocationSize;
	if (!v12) {
		return 0; /* VkPhysicalDeviceVulkan12Features is core in 1.2 only */
	}
	VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
	int has_af = has_device_ext(inst, pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
	VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, has_af ? &af : NULL};
	VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
	gf2(pd, &f2);
	out->buffer_device_address = f12.bufferDeviceAddress;
	out->int64_atomics = f12.shaderBufferInt64Atomics;
	out->float32_atomic_add = has_af && af.shaderBufferFloat32AtomicAdd;
	out->float64_atomic_add = has_af && af.shaderBufferFloat64AtomicAdd;
	out->subgroup_ext_types = out->subgroup_arith && f12.shaderSubgroupExtendedTypes;
	if (has_device_ext(inst, pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
		VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
		VkPhysicalDeviceFeatures2 g2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &pe};
		gf2(pd, &g2);
		out->pipeline_stats = pe.pipelineExecutableInfo;
	}
	/* subgroup size control: a compute pipeline may require the device's
	 * subgroup size, in full subgroups; the instance asks for Vulkan 1.2,
	 * so through the extension, also where a 1.3 device has it in core */
	if (has_ssc && has_device_ext(inst, pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) {
		VkPhysicalDeviceSubgroupSizeControlFeatures scf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
		VkPhysicalDeviceFeatures2 g2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &scf};
		gf2(pd, &g2);
		out->subgroup_control = scf.subgroupSizeControl && scf.computeFullSubgroups &&
			(ssc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) && sub.subgroupSize >= ssc.minSubgroupSize &&
			sub.subgroupSize <= ssc.maxSubgroupSize && sub.subgroupSize > 0;
		out->subgroup_control_ext = out->subgroup_control;
	}
	return 0;
}

void vks_device_extensions(vks_instance *vi, void *phys, char *buf, int len) {
	if (len <= 0) {
		return;
	}
	buf[0] = 0;
	PFN_vkEnumerateDeviceExtensionProperties f =
		(PFN_vkEnumerateDeviceExtensionProperties)gipa(vi->inst, "vkEnumerateDeviceExtensionProperties");
	uint32_t n = 0;
	VkPhysicalDevice pd = (VkPhysicalDevice)phys;
	if (f(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) {
		return;
	}
	VkExtensionProperties *p = calloc(n, sizeof *p);
	if (p && f(pd, NULL, &n, p) == VK_SUCCESS) {
		size_t used = 0;
		for (uint32_t i = 0; i < n; i++) {
			size_t l = strlen(p[i].extensionName);
			if (used + l + 2 > (size_t)len) {
				break;
			}
			if (used > 0) {
				buf[used++] = ' ';
			}
			memcpy(buf + used, p[i].extensionName, l);
			used += l;
			buf[used] = 0;
		}
	}
	free(p);
}

/* ---- device ---- */

struct vks_device {
	VkInstance inst;
	VkPhysicalDevice pd;
	VkDevice dev;
	VkQueue queue;
	uint32_t family;
	VkCommandPool pool;
	VkPipelineLayout layout;
	int timestamps;
	uint64_t ts_mask;
	float ts_period;
	VkPhysicalDeviceMemoryProperties mp;
	int prefer_mapped; /* unified memory: prefer host-visible device-local types */
	int import_host;   /* large buffers in imported huge-page memory (vks_alloc) */
	int no_map;        /* device buffers stay unmapped (vks_open) */
	int subgroup_control;    /* pipelines may require subgroup_size lanes (vks_pipeline) */
	int stats;               /* pipelines keep the driver's statistics (vks_pipeline_stats) */
	int ir;                  /* and its internal representations (vks_pipeline_ir) */
	PFN_vkGetPipelineExecutableInternalRepresentationsKHR vkGetPipelineExecutableInternalRepresentationsKHR;
	int compile_only;        /* builds pipelines, runs nothing (vks_open) */
	PFN_vkGetPipelineExecutablePropertiesKHR vkGetPipelineExecutablePropertiesKHR;
	PFN_vkGetPipelineExecutableStatisticsKHR vkGetPipelineExecutableStatisticsKHR;
	uint32_t subgroup_size;  /* the device's subgroup size */
	uint64_t import_align; /* minImportedHostPointerAlignment */
	PFN_vkGetMemoryHostPointerPropertiesEXT vkGetMemoryHostPointerPropertiesEXT;
	PFN_vkGetDeviceProcAddr gdpa;
#define F(name) PFN_##name name
	F(vkDestroyDevice);
	F(vkGetDeviceQueue);
	F(vkCreateBuffer);
	F(vkDestroyBuffer);
	F(vkGetBufferMemoryRequirements);
	F(vkAllocateMemory);
	F(vkFreeMemory);
	F(vkBindBufferMemory);
	F(vkMapMemory);
	F(vkGetBufferDeviceAddress);
	F(vkCreateShaderModule);
	F(vkDestroyShaderModule);
	F(vkCreatePipelineLayout);
	F(vkDestroyPipelineLayout);
	F(vkCreateComputePipelines);
	F(vkDestroyPipeline);
	F(vkCreateCommandPool);
	F(vkDestroyCommandPool);
	F(vkAllocateCommandBuffers);
	F(vkBeginCommandBuffer);
	F(vkEndCommandBuffer);
	F(vkResetCommandBuffer);
	F(vkCmdBindPipeline);
	F(vkCmdPushConstants);
	F(vkCmdDispatch);
	F(vkCmdCopyBuffer);
	F(vkCmdFillBuffer);
	F(vkCmdPipelineBarrier);
	F(vkCmdUpdateBuffer);
	F(vkFreeCommandBuffers);
	F(vkCmdResetQueryPool);
	F(vkCmdWriteTimestamp);
	F(vkCreateQueryPool);
	F(vkDestroyQueryPool);
	F(vkGetQueryPoolResults);
	F(vkCreateFence);
	F(vkDestroyFence);
	F(vkResetFences);
	F(vkWaitForFences);
	F(vkQueueSubmit);
	F(vkDeviceWaitIdle);
#undef F
};

/* Memory-type preferences, best first: {wanted flags, avoided flags}. */
typedef struct {
	VkMemoryPropertyFlags want, avoid;
} mem_pref;

#define HVC (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
#define DL VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT

static const mem_pref prefs_mapped[] = {{DL | HVC, 0}, {DL, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT}, {DL, 0}, {0, 0}};
static const mem_pref prefs_device[] = {{DL, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT}, {DL, 0}, {0, 0}};
static const mem_pref prefs_host[] = {{HVC | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0}, {HVC, 0}};

/* The first memory type allowed by bits that matches pref, or UINT32_MAX. */
static uint32_t pick_memory(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, mem_pref pref) {
	for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
		if ((bits & (1u << i)) && (f & pref.want) == pref.want && !(f & pref.avoid)) {
			return i;
		}
	}
	return UINT32_MAX;
}

int vks_open(vks_instance *vi, void *phys, int host_visible_device_memory, int import_host, int no_map, int stats,
	int compile_only, vks_device **out, char *err, int errlen) {
	vks_device *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of host memory");
		return -1;
	}
	d->inst = vi->inst;
	d->pd = (VkPhysicalDevice)phys;
	uint32_t ts_bits = 0;
	if (!compute_family(d->inst, d->pd, &d->family, &ts_bits)) {
		free(d);
		snprintf(err, errlen, "no compute queue family");
		return -2;
	}
	vks_caps caps;
	vks_query(vi, phys, &caps);
	d->ts_mask = ts_bits >= 64 ? ~0ull : ((1ull << ts_bits) - 1);

	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
	qci.queueFamilyIndex = d->family;
	qci.queueCount = 1;
	qci.pQueuePriorities = &prio;
	VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
	af.shaderBufferFloat32AtomicAdd = caps.float32_atomic_add;
	af.shaderBufferFloat64AtomicAdd = caps.float64_atomic_add;
	int use_af = caps.float32_atomic_add || caps.float64_atomic_add;
	VkPhysicalDeviceSubgroupSizeControlFeatures scf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, use_af ? &af : NULL};
	scf.subgroupSizeControl = VK_TRUE;
	scf.computeFullSubgroups = VK_TRUE;
	void *next12 = caps.subgroup_control ? (void *)&scf : (use_af ? (void *)&af : NULL);
	VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, next12};
	f12.bufferDeviceAddress = VK_TRUE;
	f12.shaderBufferInt64Atomics = caps.int64_atomics;
	f12.shaderSubgroupExtendedTypes = caps.subgroup_ext_types;
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, &f12};
	pe.pipelineExecutableInfo = VK_TRUE;
	const int want_ir = (stats & 2) != 0;
	stats = stats && caps.pipeline_stats;
	VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, stats ? (void *)&pe : (void *)&f12};
	f2.features.shaderInt64 = caps.shader_int64;
	f2.features.shaderFloat64 = caps.shader_float64;
	const char *exts[4];
	uint32_t nexts = 0;
	if (use_af) {
		exts[nexts++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;
	}
	if (caps.subgroup_control_ext) {
		exts[nexts++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
	}
	if (import_host) {
		exts[nexts++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
	}
	if (stats) {
		exts[nexts++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
	}
	VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
	dci.queueCreateInfoCount = 1;
	dci.pQueueCreateInfos = &qci;
	dci.enabledExtensionCount = nexts;
	dci.ppEnabledExtensionNames = nexts ? exts : NULL;
	PFN_vkCreateDevice cd = (PFN_vkCreateDevice)gipa(d->inst, "vkCreateDevice");
	VkResult r = cd(d->pd, &dci, NULL, &d->dev);
	if (r != VK_SUCCESS) {
		free(d);
		snprintf(err, errlen, "vkCreateDevice: VkResult %d", r);
		return r;
	}
	d->gdpa = (PFN_vkGetDeviceProcAddr)gipa(d->inst, "vkGetDeviceProcAddr");
#define L(name) d->name = (PFN_##name)d->gdpa(d->dev, #name)
	L(vkDestroyDevice);
	L(vkGetDeviceQueue);
	L(vkCreateBuffer);
	L(vkDestroyBuffer);
	L(vkGetBufferMemoryRequirements);
	L(vkAllocateMemory);
	L(vkFreeMemory);
	L(vkBindBufferMemory);
	L(vkMapMemory);
	L(vkGetBufferDeviceAddress);
	L(vkCreateShaderModule);
	L(vkDestroyShaderModule);
	L(vkCreatePipelineLayout);
	L(vkDestroyPipelineLayout);
	L(vkCreateComputePipelines);
	L(vkDestroyPipeline);
	L(vkCreateCommandPool);
	L(vkDestroyCommandPool);
	L(vkAllocateCommandBuffers);
	L(vkBeginCommandBuffer);
	L(vkEndCommandBuffer);
	L(vkResetCommandBuffer);
	L(vkCmdBindPipeline);
	L(vkCmdPushConstants);
	L(vkCmdDispatch);
	L(vkCmdCopyBuffer);
	L(vkCmdFillBuffer);
	L(vkCmdPipelineBarrier);
	L(vkCmdUpdateBuffer);
	L(vkFreeCommandBuffers);
	L(vkCmdResetQueryPool);
	L(vkCmdWriteTimestamp);
	L(vkCreateQueryPool);
	L(vkDestroyQueryPool);
	L(vkGetQueryPoolResults);
	L(vkCreateFence);
	L(vkDestroyFence);
	L(vkResetFences);
	L(vkWaitForFences);
	L(vkQueueSubmit);
	L(vkDeviceWaitIdle);
#undef L
	d->vkGetDeviceQueue(d->dev, d->family, 0, &d->queue);

	PFN_vkGetPhysicalDeviceMemoryProperties gm =
		(PFN_vkGetPhysicalDeviceMemoryProperties)gipa(d->inst, "vkGetPhysicalDeviceMemoryProperties");
	PFN_vkGetPhysicalDeviceProperties gp = (PFN_vkGetPhysicalDeviceProperties)gipa(d->inst, "vkGetPhysicalDeviceProperties");
	gm(d->pd, &d->mp);
	VkPhysicalDeviceProperties props;
	gp(d->pd, &props);
	d->ts_period = props.limits.timestampPeriod;
	d->prefer_mapped = host_visible_device_memory;
	d->subgroup_control = caps.subgroup_control;
	d->subgroup_size = caps.subgroup_size;
	d->no_map = no_map;
	d->compile_only = compile_only;
	if (stats) {
		d->vkGetPipelineExecutablePropertiesKHR =
			(PFN_vkGetPipelineExecutablePropertiesKHR)d->gdpa(d->dev, "vkGetPipelineExecutablePropertiesKHR");
		d->vkGetPipelineExecutableStatisticsKHR =
			(PFN_vkGetPipelineExecutableStatisticsKHR)d->gdpa(d->dev, "vkGetPipelineExecutableStatisticsKHR");
		d->stats = d->vkGetPipelineExecutablePropertiesKHR != NULL && d->vkGetPipelineExecutableStatisticsKHR != NULL;
		if (d->stats && want_ir) {
			d->vkGetPipelineExecutableInternalRepresentationsKHR = (PFN_vkGetPipelineExecutableInternalRepresentationsKHR)d->gdpa(
				d->dev, "vkGetPipelineExecutableInternalRepresentationsKHR");
			d->ir = d->vkGetPipelineExecutableInternalRepresentationsKHR != NULL;
		}
	}
	if (import_host) {
		VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
		VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &hp};
		PFN_vkGetPhysicalDeviceProperties2 gp2 =
			(PFN_vkGetPhysicalDeviceProperties2)gipa(d->inst, "vkGetPhysicalDeviceProperties2");
		gp2(d->pd, &p2);
		d->vkGetMemoryHostPointerPropertiesEXT = (PFN_vkGetMemoryHostPointerPropertiesEXT)d->gdpa(
			d->dev, "vkGetMemoryHostPointerPropertiesEXT");
		d->import_align = hp.minImportedHostPointerAlignment;
		/* acl_huge_alloc hands out 2 MiB-aligned spans */
		d->import_host = d->vkGetMemoryHostPointerPropertiesEXT != NULL && d->import_align > 0 &&
			d->import_align <= HUGE_SPAN && HUGE_SPAN % d->import_align == 0;
	}
	if (!compile_only && pick_memory(&d->mp, ~0u, prefs_host[1]) == UINT32_MAX) {
		vks_close(d);
		snprintf(err, errlen, "no host-visible coherent memory type");
		return -3;
	}

	VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
	pci.queueFamilyIndex = d->family;
	r = d->vkCreateCommandPool(d->dev, &pci, NULL, &d->pool);
	d->timestamps = ts_bits > 0;
	VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
	VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
	lci.pushConstantRangeCount = 1;
	lci.pPushConstantRanges = &pcr;
	if (r == VK_SUCCESS) {
		r = d->vkCreatePipelineLayout(d->dev, &lci, NULL, &d->layout);
	}
	if (r != VK_SUCCESS) {
		vks_close(d);
		snprintf(err, errlen, "device set-up: VkResult %d", r);
		return r;
	}
	*out = d;
	return 0;
}

void vks_close(vks_device *d) {
	if (!d) {
		return;
	}
	if (d->dev) {
		vks_wait_idle(d);
		if (d->layout) d->vkDestroyPipelineLayout(d->dev, d->layout, NULL);
		if (d->pool) d->vkDestroyCommandPool(d->dev, d->pool, NULL);
		d->vkDestroyDevice(d->dev, NULL);
	}
	free(d);
}

/* Every buffer's usage: storage through its device address, and copies. */
#define BUF_USAGE                                                                                  \
	(VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |                  \
		VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)

/* bound fills out with a buffer bound to mem (mapped where host visible). */
static void bound(vks_device *d, VkBuffer buf, VkDeviceMemory mem, void *mapped, vks_buffer *out) {
	VkBufferDeviceAddressInfo ai = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
	ai.buffer = buf;
	out->buffer = (uint64_t)buf;
	out->memory = (uint64_t)mem;
	out->address = d->vkGetBufferDeviceAddress(d->dev, &ai);
	out->mapped = mapped;
}

/* import_alloc makes a device buffer of size bytes in memory we map
 * ourselves, 2 MiB-aligned and advised MADV_HUGEPAGE (acl_huge_alloc, in
 * clshim.c), imported with VK_EXT_external_memory_host. Faulting fresh
 * 4 KiB pages runs at about 0.5 GB/s on the VMs measured here, so a large
 * fresh output of a CPU driver cost more in page faults than in its
 * kernel; lavapipe's own allocations come in 4 KiB pages. Returns
 * VK_SUCCESS, or an error after which the caller allocates the usual way. */
static VkResult import_alloc(vks_device *d, uint64_t size, vks_buffer *out) {
	uint64_t span = (size + HUGE_SPAN - 1) / HUGE_SPAN * HUGE_SPAN;
	void *p = acl_huge_alloc(span);
	if (!p) {
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	VkExternalMemoryBufferCreateInfo ebci = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
	ebci.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
	VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &ebci};
	bci.size = size;
	bci.usage = BUF_USAGE;
	bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	VkBuffer buf = VK_NULL_HANDLE;
	VkDeviceMemory mem = VK_NULL_HANDLE;
	void *mapped = NULL;
	VkResult r = d->vkCreateBuffer(d->dev, &bci, NULL, &buf);
	if (r == VK_SUCCESS) {
		VkMemoryRequirements req;
		d->vkGetBufferMemoryRequirements(d->dev, buf, &req);
		VkMemoryHostPointerPropertiesEXT hpp = {VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
		r = d->vkGetMemoryHostPointerPropertiesEXT(d->dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, p, &hpp);
		uint32_t type = UINT32_MAX;
		if (r == VK_SUCCESS && req.size <= span && span % req.alignment == 0) {
			type = pick_memory(&d->mp, req.memoryTypeBits & hpp.memoryTypeBits, prefs_host[1]);
		}
		if (type == UINT32_MAX) {
			r = VK_ERROR_FEATURE_NOT_PRESENT;
		} else {
			VkMemoryAllocateFlagsInfo fl = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
			fl.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
			VkImportMemoryHostPointerInfoEXT imp = {VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT, &fl};
			imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
			imp.pHostPointer = p;
			VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &imp};
			mai.allocationSize = span;
			mai.memoryTypeIndex = type;
			r = d->vkAllocateMemory(d->dev, &mai, NULL, &mem);
		}
	}
	if (r == VK_SUCCESS) {
		r = d->vkBindBufferMemory(d->dev, buf, mem, 0);
	}
	if (r == VK_SUCCESS) {
		r = d->vkMapMemory(d->dev, mem, 0, VK_WHOLE_SIZE, 0, &mapped);
	}
	if (r != VK_SUCCESS) {
		if (buf) d->vkDestroyBuffer(d->dev, buf, NULL);
		if (mem) d->vkFreeMemory(d->dev, mem, NULL);
		acl_huge_free(p, span);
		return r;
	}
	bound(d, buf, mem, mapped, out);
	out->host = p;
	out->host_len = span;
	return VK_SUCCESS;
}

int vks_alloc(vks_device *d, uint64_t size, int host_visible, vks_buffer *out) {
	memset(out, 0, sizeof *out);
	if (d->import_host && !host_visible && size >= HUGE_SPAN && import_alloc(d, size, out) == VK_SUCCESS) {
		return 0;
	}
	memset(out, 0, sizeof *out);
	VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bci.size = size;
	bci.usage = BUF_USAGE;
	bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	VkBuffer buf;
	VkResult r = d->vkCreateBuffer(d->dev, &bci, NULL, &buf);
	if (r != VK_SUCCESS) {
		return r;
	}
	VkMemoryRequirements req;
	d->vkGetBufferMemoryRequirements(d->dev, buf, &req);
	const mem_pref *prefs = host_visible ? prefs_host : d->prefer_mapped ? prefs_mapped : prefs_device;
	int nprefs = host_visible ? 2 : d->prefer_mapped ? 4 : 3;
	VkMemoryAllocateFlagsInfo fl = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
	fl.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
	VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &fl};
	mai.allocationSize = req.size;
	VkDeviceMemory mem = VK_NULL_HANDLE;
	uint32_t tried = 0; /* memory types already tried */
	r = VK_ERROR_FEATURE_NOT_PRESENT;
	/* Best type first; when a heap is exhausted (a small host-visible
	 * device-local window, say), fall back to the next preference. */
	for (int i = 0; i < nprefs && mem == VK_NULL_HANDLE; i++) {
		uint32_t type = pick_memory(&d->mp, req.memoryTypeBits & ~tried, prefs[i]);
		if (type == UINT32_MAX) {
			continue;
		}
		tried |= 1u << type;
		mai.memoryTypeIndex = type;
		r = d->vkAllocateMemory(d->dev, &mai, NULL, &mem);
		if (r != VK_SUCCESS && r != VK_ERROR_OUT_OF_DEVICE_MEMORY && r != VK_ERROR_OUT_OF_HOST_MEMORY) {
			break;
		}
	}
	if (mem == VK_NULL_HANDLE) {
		d->vkDestroyBuffer(d->dev, buf, NULL);
		return r;
	}
	r = d->vkBindBufferMemory(d->dev, buf, mem, 0);
	void *mapped = NULL;
	VkMemoryPropertyFlags flags = d->mp.memoryTypes[mai.memoryTypeIndex].propertyFlags;
	if (r == VK_SUCCESS && (flags & HVC) == HVC && (host_visible || !d->no_map)) {
		r = d->vkMapMemory(d->dev, mem, 0, VK_WHOLE_SIZE, 0, &mapped);
	}
	if (r != VK_SUCCESS) {
		d->vkDestroyBuffer(d->dev, buf, NULL);
		d->vkFreeMemory(d->dev, mem, NULL);
		return r;
	}
	bound(d, buf, mem, mapped, out);
	return 0;
}

void vks_free(vks_device *d, vks_buffer *b) {
	if (b->buffer) d->vkDestroyBuffer(d->dev, (VkBuffer)b->buffer, NULL);
	if (b->memory) d->vkFreeMemory(d->dev, (VkDeviceMemory)b->memory, NULL); /* unmaps too */
	if (b->host) acl_huge_free(b->host, b->host_len); /* the memory we imported */
	memset(b, 0, sizeof *b);
}

int vks_pipeline(vks_device *d, const uint32_t *code, size_t code_bytes, const uint32_t *spec, int n,
	int require_subgroup, int full_subgroups, uint64_t *pipeline, char *err, int errlen) {
	VkShaderModuleCreateInfo sci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
	sci.codeSize = code_bytes;
	sci.pCode = code;
	VkShaderModule mod;
	VkResult r = d->vkCreateShaderModule(d->dev, &sci, NULL, &mod);
	if (r != VK_SUCCESS) {
		snprintf(err, errlen, "vkCreateShaderModule: VkResult %d", r);
		return r;
	}
	VkSpecializationMapEntry entries[32];
	uint32_t data[32];
	if (n > 32) {
		n = 32;
	}
	for (int i = 0; i < n; i++) {
		entries[i].constantID = spec[2 * i];
		entries[i].offset = (uint32_t)(i * sizeof(uint32_t));
		entries[i].size = sizeof(uint32_t);
		data[i] = spec[2 * i + 1];
	}
	VkSpecializationInfo si = {(uint32_t)n, entries, n * sizeof(uint32_t), data};
	VkComputePipelineCreateInfo pci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
	pci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
	pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
	pci.stage.module = mod;
	pci.stage.pName = "main";
	pci.stage.pSpecializationInfo = &si;
	VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rs = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
	if (require_subgroup && d->subgroup_control) {
		rs.requiredSubgroupSize = d->subgroup_size;
		pci.stage.pNext = &rs;
		if (full_subgroups) {
			pci.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
		}
	}
	pci.layout = d->layout;
	if (d->stats) {
		pci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
	}
	if (d->ir) {
		pci.flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
	}
	VkPipeline p;
	r = d->vkCreateComputePipelines(d->dev, VK_NULL_HANDLE, 1, &pci, NULL, &p);
	d->vkDestroyShaderModule(d->dev, mod, NULL);
	if (r != VK_SUCCESS) {
		snprintf(err, errlen, "vkCreateComputePipelines: VkResult %d", r);
		return r;
	}
	*pipeline = (uint64_t)p;
	return 0;
}

void vks_destroy_pipeline(vks_device *d, uint64_t pipeline) {
	d->vkDestroyPipeline(d->dev, (VkPipeline)pipeline, NULL);
}

int vks_pipeline_stats(vks_device *d, uint64_t pipeline, char *buf, int len) {
	if (len > 0) {
		buf[0] = 0;
	}
	if (!d->stats) {
		return -1;
	}
	VkPipelineInfoKHR pi = {VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
	pi.pipeline = (VkPipeline)pipeline;
	uint32_t ne = 1;
	VkPipelineExecutablePropertiesKHR ep = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
	VkResult r = d->vkGetPipelineExecutablePropertiesKHR(d->dev, &pi, &ne, &ep);
	if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || ne == 0) {
		return r != VK_SUCCESS ? r : -1;
	}
	VkPipelineExecutableInfoKHR ei = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
	ei.pipeline = (VkPipeline)pipeline;
	ei.executableIndex = 0; /* a compute pipeline has one */
	uint32_t n = 0;
	r = d->vkGetPipelineExecutableStatisticsKHR(d->dev, &ei, &n, NULL);
	if (r != VK_SUCCESS) {
		return r;
	}
	VkPipelineExecutableStatisticKHR *st = calloc(n ? n : 1, sizeof *st);
	if (!st) {
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	for (uint32_t i = 0; i < n; i++) {
		st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
	}
	r = d->vkGetPipelineExecutableStatisticsKHR(d->dev, &ei, &n, st);
	int off = 0;
	for (uint32_t i = 0; r == VK_SUCCESS && i < n && off < len; i++) {
		char v[64];
		switch (st[i].format) {
		case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
			snprintf(v, sizeof v, "%u", (unsigned)st[i].value.b32);
			break;
		case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
			snprintf(v, sizeof v, "%lld", (long long)st[i].value.i64);
			break;
		case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
			snprintf(v, sizeof v, "%llu", (unsigned long long)st[i].value.u64);
			break;
		case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
			snprintf(v, sizeof v, "%g", st[i].value.f64);
			break;
		default:
			snprintf(v, sizeof v, "?");
		}
		off += snprintf(buf + off, len - off, "%s%s=%s", i ? ";" : "", st[i].name, v);
	}
	free(st);
	return r == VK_SUCCESS ? 0 : r;
}

char *vks_pipeline_ir(vks_device *d, uint64_t pipeline, int *status) {
	*status = -1;
	if (!d->ir) {
		return NULL;
	}
	VkPipelineExecutableInfoKHR ei = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
	ei.pipeline = (VkPipeline)pipeline;
	ei.executableIndex = 0; /* a compute pipeline has one */
	uint32_t n = 0;
	VkResult r = d->vkGetPipelineExecutableInternalRepresentationsKHR(d->dev, &ei, &n, NULL);
	if (r != VK_SUCCESS) {
		*status = r;
		return NULL;
	}
	VkPipelineExecutableInternalRepresentationKHR *ir = calloc(n ? n : 1, sizeof *ir);
	if (!ir) {
		*status = VK_ERROR_OUT_OF_HOST_MEMORY;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		ir[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
	}
	/* the sizes, then the texts (each given its size and a terminator) */
	r = d->vkGetPipelineExecutableInternalRepresentationsKHR(d->dev, &ei, &n, ir);
	size_t total = 1;
	for (uint32_t i = 0; r == VK_SUCCESS && i < n; i++) {
		ir[i].pData = calloc(ir[i].dataSize + 1, 1);
		if (!ir[i].pData) {
			r = VK_ERROR_OUT_OF_HOST_MEMORY;
		}
		total += strlen(ir[i].name) + 2 + ir[i].dataSize + 1;
	}
	if (r == VK_SUCCESS) {
		r = d->vkGetPipelineExecutableInternalRepresentationsKHR(d->dev, &ei, &n, ir);
	}
	char *out = r == VK_SUCCESS ? malloc(total) : NULL;
	if (out) {
		size_t off = 0;
		out[0] = 0;
		for (uint32_t i = 0; i < n; i++) {
			/* a binary representation (isText false) is left out; total
			 * holds every record (a text is at most dataSize bytes), and a
			 * record that did not fit would end the string there */
			const char *text = ir[i].isText ? (const char *)ir[i].pData : "";
			const int w = snprintf(out + off, total - off, "%s\x1f%s\x1e", ir[i].name, text);
			if (w < 0 || (size_t)w >= total - off) {
				break;
			}
			off += (size_t)w;
		}
		*status = 0;
	} else if (r == VK_SUCCESS) {
		*status = VK_ERROR_OUT_OF_HOST_MEMORY;
	} else {
		*status = r;
	}
	for (uint32_t i = 0; i < n; i++) {
		free(ir[i].pData);
	}
	free(ir);
	return out;
}

struct vks_batch {
	VkCommandBuffer cb;
	VkFence fence;
	VkQueryPool qp;
	uint32_t qcap; /* queries in qp */
	uint32_t qn;   /* queries written since begin */
};

int vks_batch_new(vks_device *d, uint32_t queries, vks_batch **out) {
	*out = NULL;
	vks_batch *b = calloc(1, sizeof *b);
	if (!b) {
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
	cai.commandPool = d->pool;
	cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	cai.commandBufferCount = 1;
	VkResult r = d->vkAllocateCommandBuffers(d->dev, &cai, &b->cb);
	VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	if (r == VK_SUCCESS) {
		r = d->vkCreateFence(d->dev, &fci, NULL, &b->fence);
	}
	if (r == VK_SUCCESS && d->timestamps && queries > 0) {
		VkQueryPoolCreateInfo qpi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
		qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
		qpi.queryCount = queries;
		r = d->vkCreateQueryPool(d->dev, &qpi, NULL, &b->qp);
		b->qcap = queries;
	}
	if (r != VK_SUCCESS) {
		vks_batch_free(d, b);
		return r;
	}
	*out = b;
	return 0;
}

void vks_batch_free(vks_device *d, vks_batch *b) {
	if (!b) {
		return;
	}
	if (b->qp) d->vkDestroyQueryPool(d->dev, b->qp, NULL);
	if (b->fence) d->vkDestroyFence(d->dev, b->fence, NULL);
	if (b->cb) d->vkFreeCommandBuffers(d->dev, d->pool, 1, &b->cb);
	free(b);
}

/* Every earlier write (shader, transfer, and with the host stage host
 * writes) before every later read or write. */
static void full_barrier(vks_device *d, VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst) {
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
	if (src & VK_PIPELINE_STAGE_HOST_BIT) {
		mb.srcAccessMask |= VK_ACCESS_HOST_WRITE_BIT;
	}
	mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
		VK_ACCESS_TRANSFER_WRITE_BIT;
	d->vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

int vks_batch_begin(vks_device *d, vks_batch *b) {
	VkResult r = d->vkResetCommandBuffer(b->cb, 0);
	if (r == VK_SUCCESS) {
		r = d->vkResetFences(d->dev, 1, &b->fence);
	}
	if (r != VK_SUCCESS) {
		return r;
	}
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	r = d->vkBeginCommandBuffer(b->cb, &bi);
	if (r != VK_SUCCESS) {
		return r;
	}
	b->qn = 0;
	if (b->qp) {
		d->vkCmdResetQueryPool(b->cb, b->qp, 0, b->qcap);
	}
	/* Earlier batches' commands (and the host's writes) before this one's. */
	full_barrier(d, b->cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
	vks_cmd_timestamp(d, b);
	return 0;
}

int vks_cmd_timestamp(vks_device *d, vks_batch *b) {
	if (!b->qp || b->qn >= b->qcap) {
		return -1;
	}
	/* ALL_COMMANDS: written once every earlier command has finished */
	d->vkCmdWriteTimestamp(b->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, b->qp, b->qn);
	return (int)b->qn++;
}

void vks_cmd_barrier(vks_device *d, vks_batch *b) {
	VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
	full_barrier(d, b->cb, st, st);
}

void vks_cmd_dispatch(vks_device *d, vks_batch *b, uint64_t pipeline, const void *push, uint32_t push_bytes,
	uint32_t gx, uint32_t gy, uint32_t gz) {
	d->vkCmdBindPipeline(b->cb, VK_PIPELINE_BIND_POINT_COMPUTE, (VkPipeline)pipeline);
	if (push_bytes > 0) {
		d->vkCmdPushConstants(b->cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
	}
	d->vkCmdDispatch(b->cb, gx, gy, gz);
}

void vks_cmd_copy(vks_device *d, vks_batch *b, uint64_t src, uint64_t src_off, uint64_t dst, uint64_t dst_off, uint64_t size) {
	VkBufferCopy c = {src_off, dst_off, size};
	d->vkCmdCopyBuffer(b->cb, (VkBuffer)src, (VkBuffer)dst, 1, &c);
}

int vks_cmd_copy_repeat(vks_device *d, vks_batch *b, uint64_t src, uint64_t src_off, uint64_t chunk, uint64_t dst,
	uint64_t dst_off, uint64_t size) {
	if (chunk == 0) {
		return VK_ERROR_FEATURE_NOT_PRESENT;
	}
	uint64_t n = (size + chunk - 1) / chunk;
	VkBufferCopy *c = calloc(n ? n : 1, sizeof *c);
	if (!c) {
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	for (uint64_t i = 0; i < n; i++) {
		c[i].srcOffset = src_off;
		c[i].dstOffset = dst_off + i * chunk;
		c[i].size = size - i * chunk < chunk ? size - i * chunk : chunk;
	}
	d->vkCmdCopyBuffer(b->cb, (VkBuffer)src, (VkBuffer)dst, (uint32_t)n, c);
	free(c);
	return 0;
}

void vks_cmd_fill(vks_device *d, vks_batch *b, uint64_t buf, uint64_t off, uint64_t size, uint32_t data) {
	d->vkCmdFillBuffer(b->cb, (VkBuffer)buf, off, size, data);
}

void vks_cmd_update(vks_device *d, vks_batch *b, uint64_t buf, uint64_t off, uint64_t size, const void *data) {
	d->vkCmdUpdateBuffer(b->cb, (VkBuffer)buf, off, size, data);
}

int vks_batch_submit(vks_device *d, vks_batch *b) {
	/* Every command's writes before the host reads or writes again. */
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_MEMORY_READ_BIT |
		VK_ACCESS_MEMORY_WRITE_BIT;
	d->vkCmdPipelineBarrier(b->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
		VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	vks_cmd_timestamp(d, b);
	VkResult r = d->vkEndCommandBuffer(b->cb);
	if (r != VK_SUCCESS) {
		return r;
	}
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
	si.commandBufferCount = 1;
	si.pCommandBuffers = &b->cb;
	return d->vkQueueSubmit(d->queue, 1, &si, b->fence);
}

int vks_batch_wait(vks_device *d, vks_batch *b) {
	return d->vkWaitForFences(d->dev, 1, &b->fence, VK_TRUE, UINT64_MAX);
}

uint64_t vks_batch_elapsed(vks_device *d, vks_batch *b, int a, int z) {
	if (!b->qp || a < 0 || z <= a || (uint32_t)z >= b->qn) {
		return 0;
	}
	uint64_t ts[2];
	if (d->vkGetQueryPoolResults(d->dev, b->qp, (uint32_t)a, 1, sizeof ts[0], &ts[0], sizeof ts[0], VK_QUERY_RESULT_64_BIT) !=
			VK_SUCCESS ||
		d->vkGetQueryPoolResults(d->dev, b->qp, (uint32_t)z, 1, sizeof ts[1], &ts[1], sizeof ts[1], VK_QUERY_RESULT_64_BIT) !=
			VK_SUCCESS) {
		return 0;
	}
	uint64_t dt = (ts[1] - ts[0]) & d->ts_mask;
	return (uint64_t)((double)dt * (double)d->ts_period);
}

int vks_batch_queries(vks_batch *b) { return (int)b->qn; }

/* RADV's null hardware (compile_only) has no queue to wait on. */
int vks_wait_idle(vks_device *d) { return d->compile_only ? 0 : d->vkDeviceWaitIdle(d->dev); }

int vks_leak_buffer_for_test(vks_device *d) {
	VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bci.size = 64;
	bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
	bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	VkBuffer buf;
	return d->vkCreateBuffer(d->dev, &bci, NULL, &buf);
}
