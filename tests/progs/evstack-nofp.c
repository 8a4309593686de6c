/* SPDX-License-Identifier: MIT */
/*
 * evstack-nofp.c - the link of prog-evstack's chain built without a
 * frame pointer: it leaves rbp as its caller set it, so a frame-pointer
 * walk from inner() goes on from outer()'s frame and skips outer().
 */
long inner(int i);

__attribute__((noinline)) long nofp_mid(int i)
{
	return inner(i) * 3 + 1;
}
