/* SPDX-License-Identifier: MIT */
/*
 * functrace-tramp.S (x86-64) - the function tracer's trampolines.
 *
 * A traced function's entry holds "call STUB" (5 bytes, where the compiler
 * left a NOP); the stub, a page near the module (lib/functrace/patch.c),
 * jumps here.  On arrival:
 *
 *     [rsp]      the function's entry + 5 (where it goes on)
 *     [rsp + 8]  the return address into the caller (the call site)
 *
 * tk__ft_tramp aligns the stack, saves every register a function receives
 * arguments in
 * (rdi rsi rdx rcx r8 r9, rax for varargs, r10 for the static chain,
 * xmm0-7), calls tk__ft_enter(entry, &return_slot, root) and goes on into
 * the function.  function_graph may have replaced the return address with
 * tk__ft_return, which saves the return registers (rax rdx xmm0 xmm1),
 * calls tk__ft_exit(sp) for the original return address and jumps there.
 * x87 registers (long double results) are left alone: the C code never
 * touches them.
 */
	.text

	.macro FT_TRAMP name, root
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	/* Compilers do not always keep the stack 16-aligned at calls to
	 * functions they know need less: align it ourselves for the C
	 * code, keeping the old rsp in rbp. */
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbp, 0
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	and $-16, %rsp
	sub $0xc0, %rsp
	mov %rdi, 0x00(%rsp)
	mov %rsi, 0x08(%rsp)
	mov %rdx, 0x10(%rsp)
	mov %rcx, 0x18(%rsp)
	mov %r8, 0x20(%rsp)
	mov %r9, 0x28(%rsp)
	mov %rax, 0x30(%rsp)
	mov %r10, 0x38(%rsp)
	movaps %xmm0, 0x40(%rsp)
	movaps %xmm1, 0x50(%rsp)
	movaps %xmm2, 0x60(%rsp)
	movaps %xmm3, 0x70(%rsp)
	movaps %xmm4, 0x80(%rsp)
	movaps %xmm5, 0x90(%rsp)
	movaps %xmm6, 0xa0(%rsp)
	movaps %xmm7, 0xb0(%rsp)
	mov 8(%rbp), %rdi
	sub $5, %rdi
	lea 16(%rbp), %rsi
	mov $\root, %edx
	call tk__ft_enter
	mov 0x00(%rsp), %rdi
	mov 0x08(%rsp), %rsi
	mov 0x10(%rsp), %rdx
	mov 0x18(%rsp), %rcx
	mov 0x20(%rsp), %r8
	mov 0x28(%rsp), %r9
	mov 0x30(%rsp), %rax
	mov 0x38(%rsp), %r10
	movaps 0x40(%rsp), %xmm0
	movaps 0x50(%rsp), %xmm1
	movaps 0x60(%rsp), %xmm2
	movaps 0x70(%rsp), %xmm3
	movaps 0x80(%rsp), %xmm4
	movaps 0x90(%rsp), %xmm5
	movaps 0xa0(%rsp), %xmm6
	movaps 0xb0(%rsp), %xmm7
	mov %rbp, %rsp
	.cfi_def_cfa_register rsp
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	ret
	.cfi_endproc
	.size \name, . - \name
	.endm

	FT_TRAMP tk__ft_tramp, 0
	FT_TRAMP tk__ft_tramp_root, 1

/* Reached by the traced function's ret: rsp is just above the slot that
 * held the return address. */
	.globl tk__ft_return
	.hidden tk__ft_return
	.type tk__ft_return, @function
	.p2align 4
tk__ft_return:
	.cfi_startproc
	.cfi_undefined rip
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbp, 0
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	and $-16, %rsp
	sub $0x30, %rsp
	mov %rax, 0x00(%rsp)
	mov %rdx, 0x08(%rsp)
	movaps %xmm0, 0x10(%rsp)
	movaps %xmm1, 0x20(%rsp)
	lea 8(%rbp), %rdi
	call tk__ft_exit
	mov %rax, %r11
	mov 0x00(%rsp), %rax
	mov 0x08(%rsp), %rdx
	movaps 0x10(%rsp), %xmm0
	movaps 0x20(%rsp), %xmm1
	mov %rbp, %rsp
	.cfi_def_cfa_register rsp
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	jmp *%r11
	.cfi_endproc
	.size tk__ft_return, . - tk__ft_return

	.section .note.GNU-stack, "", @progbits
