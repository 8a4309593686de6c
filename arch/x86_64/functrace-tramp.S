/* SPDX-License-Identifier: MIT */
/*
 * functrace-tramp.S (x86-64) - the function tracer's trampolines.
 *
 * A traced function's entry holds "jmp STUB" (5 bytes, where the compiler
 * left a NOP); its stub (arch/x86_64/functrace.c), in a page near the
 * module, loads the entry + 5 into r11 (scratch at a function's entry) and
 * jumps here.  On arrival [rsp] is the return address into the caller.
 *
 * tk__ft_tramp saves every general register a function receives arguments
 * in (rdi rsi rdx rcx r8 r9, rax for varargs, r10 for the static chain)
 * and calls tk__ft_enter_fast(entry, &return_slot, root)
 * (lib/functrace/fast.c: no vector registers, no calls).  When that
 * answers 1 it aligns the stack, saves xmm0-7 too and calls the full
 * tk__ft_enter with the same arguments.  Both answer 2 when they replaced
 * the return address with tk__ft_return (function_graph).  Then it goes on
 * into the function: with a jump, or, when the return is hooked, with
 * "call" from the instruction just before tk__ft_return (tk__ft_into), so
 * that the CPU's return stack predicts the function's ret to
 * tk__ft_return, and the caller's address stays under it for the return
 * from there.
 *
 * tk__ft_return saves the return registers rax rdx and calls
 * tk__ft_exit_fast(sp) for the original return address; when that
 * answers 0, it saves xmm0 xmm1 too and asks tk__ft_exit(sp).  It goes
 * back to the caller with push + ret, which the return stack predicts.
 * x87 registers (long double results) are left alone: the C code never
 * touches them.
 *
 * A library call through the PLT comes to tk__ft_tramp_plt instead: the
 * GOT slot points at the slot's stub, which loads into r11 the address
 * of a pair {slot, target} (arch/x86_64/functrace.c) and jumps here.  The
 * function recorded is the slot (the trace names it after its symbol),
 * and the call goes on to target; the rest is tk__ft_tramp's.
 */
	.text

	.macro FT_TRAMP name, root, plt
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	push %r11
	.cfi_adjust_cfa_offset 8
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	push %rcx
	.cfi_adjust_cfa_offset 8
	push %r8
	.cfi_adjust_cfa_offset 8
	push %r9
	.cfi_adjust_cfa_offset 8
	push %rax
	.cfi_adjust_cfa_offset 8
	push %r10
	.cfi_adjust_cfa_offset 8
	.if \plt
	mov (%r11), %rdi
	.else
	lea -5(%r11), %rdi
	.endif
	lea 0x48(%rsp), %rsi
	mov $\root, %edx
	call tk__ft_enter_fast
	cmp $1, %eax
	je 2f
	/* the flags say 2 (hooked) through the pops */
1:	cmp $2, %eax
	pop %r10
	.cfi_remember_state
	.cfi_adjust_cfa_offset -8
	pop %rax
	.cfi_adjust_cfa_offset -8
	pop %r9
	.cfi_adjust_cfa_offset -8
	pop %r8
	.cfi_adjust_cfa_offset -8
	pop %rcx
	.cfi_adjust_cfa_offset -8
	pop %rdx
	.cfi_adjust_cfa_offset -8
	pop %rsi
	.cfi_adjust_cfa_offset -8
	pop %rdi
	.cfi_adjust_cfa_offset -8
	pop %r11
	.cfi_adjust_cfa_offset -8
	.if \plt
	mov 8(%r11), %r11 /* the target; the flags stay */
	.endif
	je tk__ft_into
	jmp *%r11
	.cfi_restore_state
	/* The full handler: C code that may use vector registers and call
	 * anything, with the stack aligned (compilers do not always keep
	 * it so at calls to functions they know need less). */
2:	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbp, 0
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	and $-16, %rsp
	sub $0x80, %rsp
	movaps %xmm0, 0x00(%rsp)
	movaps %xmm1, 0x10(%rsp)
	movaps %xmm2, 0x20(%rsp)
	movaps %xmm3, 0x30(%rsp)
	movaps %xmm4, 0x40(%rsp)
	movaps %xmm5, 0x50(%rsp)
	movaps %xmm6, 0x60(%rsp)
	movaps %xmm7, 0x70(%rsp)
	mov 0x48(%rbp), %rdi
	.if \plt
	mov (%rdi), %rdi
	.else
	sub $5, %rdi
	.endif
	lea 0x50(%rbp), %rsi
	mov $\root, %edx
	call tk__ft_enter
	movaps 0x00(%rsp), %xmm0
	movaps 0x10(%rsp), %xmm1
	movaps 0x20(%rsp), %xmm2
	movaps 0x30(%rsp), %xmm3
	movaps 0x40(%rsp), %xmm4
	movaps 0x50(%rsp), %xmm5
	movaps 0x60(%rsp), %xmm6
	movaps 0x70(%rsp), %xmm7
	mov %rbp, %rsp
	.cfi_def_cfa_register rsp
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	jmp 1b
	.cfi_endproc
	.size \name, . - \name
	.endm

	FT_TRAMP tk__ft_tramp, 0, 0
	FT_TRAMP tk__ft_tramp_root, 1, 0
	FT_TRAMP tk__ft_tramp_plt, 0, 1
	FT_TRAMP tk__ft_tramp_plt_root, 1, 1

/* Into a hooked function (r11): the call pushes tk__ft_return, which the
 * return slot holds already; tk__ft_go drops it again.  An unwinder that
 * meets tk__ft_return as a return address stops here. */
	.p2align 4
	.type tk__ft_into, @function
tk__ft_into:
	.cfi_startproc
	.cfi_undefined rip
	call tk__ft_go
	.cfi_endproc
	.size tk__ft_into, . - tk__ft_into

/* Reached by the traced function's ret: rsp is just above the slot that
 * held the return address. */
	.globl tk__ft_return
	.hidden tk__ft_return
	.type tk__ft_return, @function
tk__ft_return:
	.cfi_startproc
	.cfi_undefined rip
	push %rax
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	lea 0x10(%rsp), %rdi
	call tk__ft_exit_fast
	test %rax, %rax
	jz 2f
1:	mov %rax, %r11
	pop %rdx
	.cfi_remember_state
	.cfi_adjust_cfa_offset -8
	pop %rax
	.cfi_adjust_cfa_offset -8
	push %r11
	.cfi_adjust_cfa_offset 8
	ret
	.cfi_restore_state
2:	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbp, 0
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	and $-16, %rsp
	sub $0x20, %rsp
	movaps %xmm0, 0x00(%rsp)
	movaps %xmm1, 0x10(%rsp)
	lea 0x18(%rbp), %rdi
	call tk__ft_exit
	movaps 0x00(%rsp), %xmm0
	movaps 0x10(%rsp), %xmm1
	mov %rbp, %rsp
	.cfi_def_cfa_register rsp
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	jmp 1b
	.cfi_endproc
	.size tk__ft_return, . - tk__ft_return

	.type tk__ft_go, @function
tk__ft_go:
	.cfi_startproc
	.cfi_undefined rip
	lea 8(%rsp), %rsp
	jmp *%r11
	.cfi_endproc
	.size tk__ft_go, . - tk__ft_go

	.section .note.GNU-stack, "", @progbits
