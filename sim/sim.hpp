#pragma once
// The engine's public surface in one include.

#include "sim/distribution.hpp"
#include "sim/engine.hpp"
#include "sim/errors.hpp"
#include "sim/future.hpp"
#include "sim/mailbox.hpp"
#include "sim/process.hpp"
#include "sim/random.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"
