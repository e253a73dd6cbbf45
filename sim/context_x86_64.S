/* jump_context on x86-64 (see sim/context.hpp). The frame it saves and restores is Boost
 * 1.74's for x86-64 System V, from make_fcontext and jump_fcontext:
 *   0x00 MXCSR (4 bytes), x87 control word (2 bytes)
 *   0x08 r12, 0x10 r13, 0x18 r14, 0x20 r15, 0x28 rbx, 0x30 rbp
 *   0x38 the address to continue at
 * A suspended context is the address of that frame. Arguments: rdi = the context to
 * continue, rsi = data. Result (rax, rdx) = the context just suspended, the data; a fresh
 * context's entry receives the same pair in (rdi, rsi).
 */

#if defined(__x86_64__) && defined(__ELF__)

  .text
  .globl locksim_jump_context
  .hidden locksim_jump_context
  .type locksim_jump_context, @function
  .p2align 4
locksim_jump_context:
  leaq -0x38(%rsp), %rsp
  stmxcsr (%rsp)
  fnstcw 0x4(%rsp)
  movq %r12, 0x8(%rsp)
  movq %r13, 0x10(%rsp)
  movq %r14, 0x18(%rsp)
  movq %r15, 0x20(%rsp)
  movq %rbx, 0x28(%rsp)
  movq %rbp, 0x30(%rsp)
  movq %rsp, %rax
  movq %rdi, %rsp
  ldmxcsr (%rsp)
  fldcw 0x4(%rsp)
  movq 0x8(%rsp), %r12
  movq 0x10(%rsp), %r13
  movq 0x18(%rsp), %r14
  movq 0x20(%rsp), %r15
  movq 0x28(%rsp), %rbx
  movq 0x30(%rsp), %rbp
  leaq 0x38(%rsp), %rsp
  movq %rsi, %rdx
  movq %rax, %rdi
  ret
  .size locksim_jump_context, . - locksim_jump_context

/* locksim_call_on_stack(fn = rdi, arg = rsi, top = rdx): calls fn(arg) with the stack
 * pointer at `top` (16-byte aligned), then returns on the caller's stack. A plain call and
 * return, so the return-address predictor stays in step. The frame pointer keeps the
 * caller's frame, and the CFI says so: debuggers and profilers walk through. fn must not
 * let an exception out. */
  .globl locksim_call_on_stack
  .hidden locksim_call_on_stack
  .type locksim_call_on_stack, @function
  .p2align 4
locksim_call_on_stack:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  movq %rdx, %rsp
  movq %rdi, %rax
  movq %rsi, %rdi
  callq *%rax
  movq %rbp, %rsp
  popq %rbp
  .cfi_def_cfa %rsp, 8
  ret
  .cfi_endproc
  .size locksim_call_on_stack, . - locksim_call_on_stack

  .section .note.GNU-stack, "", @progbits
#endif
