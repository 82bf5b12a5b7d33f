/* portable.h: the subset of C shared by OpenCL C and GLSL.
 *
 * Headers in this folder are included by the kernels in clkernels (the OpenCL host path
 * inlines them) and by the GLSL shaders (glslc -I clkernels/common), so index
 * math is written once for both languages. Write only what both accept:
 * plain functions of scalars, no pointers, structs only through STRUCT,
 * casts through CAST, 64-bit integers as i64/u64, literals through I64C. */
#ifndef ACCEL_PORTABLE_H
#define ACCEL_PORTABLE_H

/* ACCEL_CL is defined when the source is OpenCL C: drivers define
 * __OPENCL_VERSION__ (and __OPENCL_C_VERSION__), clang's own OpenCL front
 * end (the offline compiles of TestOfflineCompile) only
 * __OPENCL_C_VERSION__. Every header tests ACCEL_CL, never the two. */
#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define ACCEL_CL 1
#endif

#ifdef ACCEL_CL
#define i64 long
#define u64 ulong
#define i32 int
#define u32 uint
#define CAST(T, x) ((T)(x))
#else /* GLSL; the shader enables GL_EXT_shader_explicit_arithmetic_types_int64 */
#define i64 int64_t
#define u64 uint64_t
#define i32 int
#define u32 uint
#define CAST(T, x) T(x)
#endif

#define I64C(x) CAST(i64, x)

/* STRUCT(name) { fields }; declares a struct type both languages call
 * name (OpenCL C through a typedef). A helper that yields several values
 * returns one (portable code has no out-parameters); set its fields one
 * by one (the languages share no initializer syntax). */
#ifdef ACCEL_CL
#define STRUCT(name) \
	typedef struct name name; \
	struct name
#else
#define STRUCT(name) struct name
#endif

/* A mode-like argument that the host may fold into a knob (host.Fold, for
 * drivers that run both sides of every branch): the knob K where it is set
 * (>= 0), else the run-time value rt. Wrappers default such knobs to -1. */
#define FOLD(K, rt) ((K) >= 0 ? I64C(K) : (rt))

/* Marks a function that OpenCL C's compiler inlines in every build: a
 * helper that replaced a macro's body (a kernel's per-position step: PoCL
 * left a call per position in some builds without it), every entry
 * point's body (the function its generated kernel calls) and the large
 * helpers of the GPU kernels. An OpenCL C function has external linkage,
 * so without the mark a large one with a single caller stays a call:
 * clang did for AMD's GPUs in eleven GPU kernels, with their saved
 * registers and private arrays in scratch memory (TestOfflineCompile;
 * TestSourcesAgreeWithDeclarations requires it of the bodies). Static too
 * (OpenCL C 1.2): a function with external linkage is compiled once more
 * on its own after it was inlined, which made clang's build of the 30
 * variants for gfx90a take 129 s where static takes 76 (98 before the
 * bodies were inlined), the same kernels' code. GLSL has no such hint,
 * and its drivers inline every function. */
#ifdef ACCEL_CL
#define INLINE static __attribute__((always_inline))
#else
#define INLINE
#endif

/* Asks the compiler to unroll the loop that follows completely (a loop of
 * constant trip count whose body indexes a private array: once unrolled,
 * the array lives in registers; indexed at a run-time slot it lives in
 * the work-item's stack, local memory on a GPU, which TestOfflineNoStack
 * checks in NVIDIA's PTX): OpenCL C's pragma, GLSL's loop attribute
 * (GL_EXT_control_flow_attributes, the SPIR-V loop's Unroll hint, which
 * the driver takes once a specialization constant fixes the count). */
#ifdef ACCEL_CL
#define UNROLL _Pragma("unroll")
#else
#extension GL_EXT_control_flow_attributes : require
#define UNROLL [[unroll]]
#endif

/* The leading zero bits of a 32-bit word (32 for 0), and its set bits. */
#ifdef ACCEL_CL
#define CLZ32(x) CAST(int, clz(CAST(u32, x))) /* 32-ok: a bit count, <= 32 */
#define POPC32(x) CAST(int, popcount(CAST(u32, x))) /* 32-ok: a bit count, <= 32 */
#else
#define CLZ32(x) (31 - findMSB(CAST(u32, x))) /* 32-ok: a bit count, <= 32 */
#define POPC32(x) bitCount(CAST(u32, x)) /* 32-ok: a bit count, <= 32 */
#endif

i64 min64(i64 a, i64 b) { return a < b ? a : b; }
i64 max64(i64 a, i64 b) { return a > b ? a : b; }

/* Work-group linear id over a 3-D grid of groups, and the total group count.
 * Kernels loop over tiles with a stride of the total, so any grid shape the
 * planner picks (within the device's per-dimension limits) covers any N. */
#ifdef ACCEL_CL
#define GROUP_LINEAR_ID() (I64C(get_group_id(0)) + I64C(get_group_id(1)) * I64C(get_num_groups(0)) + \
	I64C(get_group_id(2)) * I64C(get_num_groups(0)) * I64C(get_num_groups(1)))
#define GROUP_TOTAL() (I64C(get_num_groups(0)) * I64C(get_num_groups(1)) * I64C(get_num_groups(2)))
#define LOCAL_ID() I64C(get_local_id(0))
#else
#define GROUP_LINEAR_ID() (I64C(gl_WorkGroupID.x) + I64C(gl_WorkGroupID.y) * I64C(gl_NumWorkGroups.x) + \
	I64C(gl_WorkGroupID.z) * I64C(gl_NumWorkGroups.x) * I64C(gl_NumWorkGroups.y))
#define GROUP_TOTAL() (I64C(gl_NumWorkGroups.x) * I64C(gl_NumWorkGroups.y) * I64C(gl_NumWorkGroups.z))
#define LOCAL_ID() I64C(gl_LocalInvocationID.x)
#endif

#include "arith.h"

#endif
