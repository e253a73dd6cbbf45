#pragma once
// Running out of memory, as the command reports it: a failed operator new throws std::bad_alloc,
// which main() turns into one line and exit 2, never a signal.
//
// With mimalloc linked (LOCKSIM_MIMALLOC), its own operator new, built as C, aborts instead (exit
// 134, nothing said), and a new-handler cannot stop it: Debian's build binds its lookup of the
// handler inside the library. allocation_failure.cpp therefore replaces every form of operator new
// and delete in the `locksim` program with ones over mimalloc's mi_malloc and mi_free: the same
// allocator, and a null pointer becomes std::bad_alloc. C code (Lua's allocator, Open MPI) is
// unchanged: its malloc, mimalloc's too, still returns null.
