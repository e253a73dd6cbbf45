#pragma once
// SQL through the parser, the planner and the database model, in one process: statements per
// second over a mixed set as a design under review writes them (ranges, IN, computed updates,
// multi-row inserts, LIMIT ... SKIP LOCKED), and over the point statements the C++ strategies
// send, each prepared and bound anew every time so the parser's cost is in the figure.

namespace bench {

struct SqlFigures {
  double mixed_statements_per_s = 0;  // prepare + bind + execute, the mixed set
  double point_statements_per_s = 0;  // the same, the strategies' point statements
  double prepares_per_s = 0;          // prepare alone, the mixed set
};

SqlFigures sql_bench(int repeats);

}  // namespace bench
