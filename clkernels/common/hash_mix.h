/* hash_mix.h: the 64-bit hash of the hash tables' keys, shared by
 * hash_body.h (the HashTable and Unique's table) and indice_body.h (the
 * input sites' table of get_indice_pairs). The host's copy for tests is
 * accel/hash_test.go's fmix. */
#ifndef ACCEL_HASH_MIX_H
#define ACCEL_HASH_MIX_H

/* The 64-bit finalizer of MurmurHash3 (a bijection): keys that differ only
 * in high bits still spread over the low bits the mask keeps. */
u64 ht_hash(u64 k) {
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdUL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53UL;
	k ^= k >> 33;
	return k;
}

#endif
