// sapling: exact broad-phase collision detection. Include this for everything.
#pragma once

#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/debug_draw.hpp"
#include "sapling/float_key.hpp"
#include "sapling/options.hpp"
#include "sapling/pair.hpp"
#include "sapling/pair_manager.hpp"
#include "sapling/recompute.hpp"
#include "sapling/registry.hpp"
#include "sapling/status.hpp"
#include "sapling/task_system.hpp"
#include "sapling/trace.hpp"
#include "sapling/unisize.hpp"
