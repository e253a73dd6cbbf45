#pragma once
// PostgreSQL's SQL lives in models/db/postgres/sql.hpp; this name is kept for the files of
// models/db that still include it (ddl.cpp) and the comments that point here (sql.hpp).

#include "models/db/postgres/sql.hpp"
