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
  /// PostgreSQL's parser (libpg_query): the strategies' point statements in its dialect, parsed
  /// alone, and the same parsed by MariaDB's front end, side by side.
  double pg_point_prepares_per_s = 0;
  double mysql_point_prepares_per_s = 0;
};

SqlFigures sql_bench(int repeats);

}  // namespace bench
