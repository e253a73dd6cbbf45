// MariaDB's SQL parser (models/db/innodb/sql_parser.hpp): ALTER TABLE and CREATE TABLE.

#include "models/db/innodb/sql_parser.hpp"

namespace models::db::sql::mariadb {

// ALTER has been taken: ADD [UNIQUE] INDEX|KEY [name] (col) or DROP INDEX|KEY name, then
// optionally ALGORITHM=INPLACE and LOCK=NONE, which are what the model runs anyway.
void Parser::alter_table() {
  if (!accept("TABLE")) unsupported();
  Statement& s = out_.statement;
  s.table = name("a table name");
  if (accept("ADD")) {
    if (!is("UNIQUE") && !is("INDEX") && !is("KEY")) fail(kAlter);
    const KeyIndexDef def = index_clause();
    s.kind = Statement::Kind::add_index;
    s.index = def.name;
    s.column = def.columns.front();
    s.unique = def.kind == KeyIndex::unique;
    if (def.columns.size() > 1)
      s.edit().index_def = std::make_shared<const IndexDef>(IndexDef{.name = def.name, .columns = def.columns, .unique = s.unique});
  } else if (accept("DROP")) {
    if (!accept("INDEX") && !accept("KEY")) fail(kAlter);
    s.kind = Statement::Kind::drop_index;
    s.index = name("an index name");
  } else {
    fail(kAlter);
  }
  while (accept_symbol(",")) {
    if (accept("ALGORITHM")) {
      accept_symbol("=");
      if (!accept("INPLACE") && !accept("DEFAULT")) fail("INPLACE or DEFAULT (ALGORITHM=COPY and INSTANT are not modelled)");
    } else if (accept("LOCK")) {
      accept_symbol("=");
      if (!accept("NONE") && !accept("DEFAULT")) fail("NONE or DEFAULT (LOCK=SHARED and EXCLUSIVE are not modelled)");
    } else {
      fail("ALGORITHM=INPLACE or LOCK=NONE (one change per ALTER TABLE in the model)");
    }
  }
  finish(", ALGORITHM=INPLACE, LOCK=NONE or ");
}

// CREATE has been taken.
void Parser::create_table() {
  if (!accept("TABLE")) unsupported();
  TableSchema schema{.name = name("a table name"), .key_index = KeyIndex::none};
  expect_symbol("(");
  std::vector<ColumnDef> columns;
  bool has_id = false, has_primary = false;
  // A primary key on other columns than id (`k VARCHAR(64) PRIMARY KEY`, `PRIMARY KEY (a, b)`):
  // its columns and where each is named.
  std::optional<KeyIndexDef> natural;
  std::vector<KeyIndexDef> indexes;  // the first is the key index, the others schema.indexes
  auto add_index = [&](KeyIndexDef def, std::size_t at) {
    if (indexes.size() == kMostIndexes) fail_at(at, "at most 64 indexes (1069 Too many keys specified)");
    const auto taken = [&](const std::string& name) {
      return std::any_of(indexes.begin(), indexes.end(), [&](const KeyIndexDef& d) { return d.name == name; });
    };
    if (def.named && taken(def.name)) fail_at(at, "an index name not used already (1061 Duplicate key name)");
    // An index without a name takes its first column's, then _2, _3, ... as MariaDB names them.
    for (int n = 2; !def.named && taken(def.name); ++n) def.name = def.columns.front() + "_" + std::to_string(n);
    indexes.push_back(std::move(def));
  };
  const auto primary_key = [&](std::size_t at) {
    if (has_primary) fail_at(at, "one PRIMARY KEY (1068 Multiple primary key defined)");
    has_primary = true;
  };
  do {
    check_count(columns.size(), "columns");
    const std::size_t at = token_.position;
    if (accept("PRIMARY")) {
      primary_key(at);
      expect("KEY");
      if (!is_symbol("(")) fail("( (a primary key is named PRIMARY)");
      KeyIndexDef def;
      def.name = "PRIMARY";
      def.named = true;
      def = index_columns(std::move(def));
      if (def.columns != std::vector<std::string>{"id"}) natural = std::move(def);
    } else if (is("UNIQUE") || is("KEY") || is("INDEX")) {
      add_index(index_clause(), at);
    } else {
      const std::string column = name("a column definition, PRIMARY KEY (columns), UNIQUE KEY (columns) or KEY (columns)");
      for (const ColumnDef& c : columns)
        if (c.name == column) fail_at(at, "a column not defined already");
      if (column == "id") {
        if (has_id) fail_at(at, "a column not defined already");
        has_id = true;
        std::optional<std::size_t> primary_at;
        id_definition(schema.auto_increment, primary_at);
        if (primary_at) primary_key(*primary_at);
        columns.push_back(ColumnDef{.name = column, .default_value = std::int64_t{0}});
      } else {
        std::optional<std::size_t> unique_at, primary_at;
        ColumnDef c{.name = column, .default_value = {}};
        c.default_value = column_definition(unique_at, primary_at, c);
        columns.push_back(std::move(c));
        if (primary_at) {
          primary_key(*primary_at);
          natural = KeyIndexDef{{column}, "PRIMARY", KeyIndex::unique, {at}, true};
        }
        if (unique_at) add_index(KeyIndexDef{{column}, column, KeyIndex::unique, {at}}, *unique_at);
      }
    }
  } while (accept_symbol(","));
  const std::size_t close_at = token_.position;
  expect_symbol(")", ", or )");
  table_from(schema, columns, natural, indexes, has_id, has_primary, close_at);
  table_options();
  out_.create = std::move(schema);
}

// CREATE TABLE's schema from its column and index definitions, once they are read: the primary
// key, the key index and the further ones, and each column's type, default and NULL.
void Parser::table_from(TableSchema& schema, std::vector<ColumnDef>& columns, std::optional<KeyIndexDef>& natural,
                        std::vector<KeyIndexDef>& indexes, bool has_id, bool has_primary, std::size_t close_at) {
  if (natural) {
    // The model's rows keep an id of their own, which such a table does not show: a column id
    // would be another column, which the model's tables do not have.
    if (has_id) fail_at(close_at, "no column id in a table whose primary key is another (id is the model's integer primary key)");
    for (std::size_t i = 0; i < natural->columns.size(); ++i) {
      auto c = std::find_if(columns.begin(), columns.end(), [&](const ColumnDef& d) { return d.name == natural->columns[i]; });
      if (c == columns.end()) fail_at(natural->positions[i], "a column the table defines (1072 Key column doesn't exist in table)");
      if (c->said_null) fail_at(natural->positions[i], "a NOT NULL column (1171 All parts of a PRIMARY KEY must be NOT NULL)");
      if (c->has_default) fail_at(natural->positions[i], "a primary key column without DEFAULT (the model's keys are always given)");
      c->nullable = c->null_by_default = false;  // a primary key's columns are NOT NULL
    }
    indexes.insert(indexes.begin(), std::move(*natural));
    schema.clustered_key = true;
    schema.auto_increment = false;
  } else {
    if (!has_id) fail_at(close_at, "an id column: id BIGINT AUTO_INCREMENT PRIMARY KEY, or a PRIMARY KEY on other columns");
    if (!has_primary) fail_at(close_at, ", PRIMARY KEY (id)");
  }
  for (const KeyIndexDef& index : indexes)
    for (std::size_t i = 0; i < index.columns.size(); ++i) {
      const std::string& column = index.columns[i];
      if (column == "id" && has_id) fail_at(index.positions[i], "a column other than id (id is the primary key)");
      if (std::none_of(columns.begin(), columns.end(), [&](const ColumnDef& c) { return c.name == column; }))
        fail_at(index.positions[i], "a column the table defines");
    }
  if (!indexes.empty()) {
    const KeyIndexDef& index = indexes.front();
    schema.key_column = index.columns.front();
    schema.key_text = std::holds_alternative<std::string>(
        std::find_if(columns.begin(), columns.end(), [&](const ColumnDef& c) { return c.name == schema.key_column; })->default_value);
    schema.key_tail.assign(index.columns.begin() + 1, index.columns.end());
    schema.key_index = index.kind;
    schema.index_name = index.name;
  }
  for (std::size_t i = 1; i < indexes.size(); ++i)
    schema.indexes.push_back(IndexDef{.name = indexes[i].name, .columns = indexes[i].columns, .unique = indexes[i].kind == KeyIndex::unique});
  if (has_id) schema.column_order.push_back("id");
  for (ColumnDef& c : columns) {
    if (c.name == "id") continue;
    if (c.type) schema.types[c.name] = *c.type;
    schema.column_order.push_back(c.name);
    if (c.nullable) schema.nullable.push_back(c.name);
    if (c.null_by_default) schema.null_by_default.push_back(c.name);
    if (c.name != schema.key_column) schema.columns[c.name] = std::move(c.default_value);
  }
  std::sort(schema.nullable.begin(), schema.nullable.end());
  std::sort(schema.null_by_default.begin(), schema.null_by_default.end());
}

// UNIQUE [KEY|INDEX] [name] (col, ...) | KEY|INDEX [name] (col, ...), at its first word. An
// index without a name takes its first column's, as MariaDB names it.
KeyIndexDef Parser::index_clause() {
  KeyIndexDef def;
  if (accept("UNIQUE")) {
    if (!accept("KEY")) accept("INDEX");
  } else {
    advance();  // KEY or INDEX
    def.kind = KeyIndex::non_unique;
  }
  if (!is_symbol("(")) def.name = name("an index name or ("), def.named = true;
  return index_columns(std::move(def));
}

// An index's `(col, ...)`, at its parenthesis, into `def`; an index without a name takes its
// first column's.
KeyIndexDef Parser::index_columns(KeyIndexDef def) {
  expect_symbol("(");
  do {
    const std::size_t at = token_.position;
    if (def.columns.size() == kMaxKeyParts) fail_at(at, "at most 32 columns in an index (1070 Too many key parts specified)");
    std::string column = name("a column name");
    if (std::find(def.columns.begin(), def.columns.end(), column) != def.columns.end())
      fail_at(at, "a column not in the index already (1060 Duplicate column name)");
    def.columns.push_back(std::move(column));
    def.positions.push_back(at);
  } while (accept_symbol(","));
  expect_symbol(")", ", or )");
  if (def.name.empty()) def.name = def.columns.front();
  return def;
}

// The rest of `id BIGINT|INT [UNSIGNED] [NOT NULL] [AUTO_INCREMENT] [PRIMARY KEY]`: sets
// `auto_increment`, and `primary_at` where it says PRIMARY KEY.
void Parser::id_definition(bool& auto_increment, std::optional<std::size_t>& primary_at) {
  const std::size_t type_at = token_.position;
  if (!(accept("BIGINT") || accept("INT") || accept("INTEGER")))
    fail_at(type_at, "BIGINT or INT (id is the integer primary key)");
  display_width();
  accept("UNSIGNED");
  auto_increment = false;
  for (;;) {
    if (accept("NOT")) {
      expect("NULL");
    } else if (accept("AUTO_INCREMENT")) {
      auto_increment = true;
    } else if (is("PRIMARY")) {
      primary_at = token_.position;
      advance();
      expect("KEY");
    } else if (accept("COMMENT")) {
      comment();
    } else {
      break;
    }
  }
  if (!is_symbol(",") && !is_symbol(")")) fail("NOT NULL, AUTO_INCREMENT, PRIMARY KEY, COMMENT, , or )");
}

// A column's type and attributes; returns its default, the type's zero where that is NULL (a
// column that may hold NULL and gives no other: `null_by_default`), and sets the rest of `c`.
// `unique_at`, `primary_at`: where an inline UNIQUE or PRIMARY KEY is.
Value Parser::column_definition(std::optional<std::size_t>& unique_at, std::optional<std::size_t>& primary_at, ColumnDef& c) {
  bool integer = true;
  // MariaDB's integer types' ranges, signed and UNSIGNED (BIGINT UNSIGNED's upper half is past
  // what the model's integers hold).
  const auto integer_type = [&](int bits) {
    display_width();
    ColumnType t{.name = "integer"};
    const bool is_unsigned = accept("UNSIGNED");
    if (bits < 64) {
      t.min = is_unsigned ? 0 : -(std::int64_t{1} << (bits - 1));
      t.max = is_unsigned ? (std::int64_t{1} << bits) - 1 : (std::int64_t{1} << (bits - 1)) - 1;
    } else if (is_unsigned) {
      t.min = 0;
    }
    c.type = t;
  };
  if (accept("BIGINT")) {
    integer_type(64);
  } else if (accept("INT") || accept("INTEGER")) {
    integer_type(32);
  } else if (accept("SMALLINT")) {
    integer_type(16);
  } else if (accept("TINYINT")) {
    integer_type(8);
  } else if (accept("VARCHAR")) {
    expect_symbol("(");
    c.type = ColumnType{.max_chars = static_cast<std::size_t>(std::max<std::int64_t>(0, token_.number))};
    length();
    expect_symbol(")");
    integer = false;
  } else if (accept("CHAR")) {
    // CHAR alone is CHAR(1).
    c.type = ColumnType{.max_chars = 1};
    if (accept_symbol("(")) {
      c.type->max_chars = static_cast<std::size_t>(std::max<std::int64_t>(0, token_.number));
      length();
      expect_symbol(")");
    }
    integer = false;
  } else if (accept("TEXT")) {
    integer = false;
  } else if (accept("DATETIME") || accept("TIMESTAMP")) {
    display_width();  // fractional seconds
  } else {
    fail("a column type: BIGINT, INT, SMALLINT, TINYINT, VARCHAR(n), CHAR(n), TEXT, DATETIME or TIMESTAMP");
  }
  // A NOT NULL column without a DEFAULT takes its type's zero, as MySQL's implicit default.
  Value default_value = integer ? Value{std::int64_t{0}} : Value{std::string()};
  std::optional<std::size_t> default_null_at;  // DEFAULT NULL, and where
  bool has_default = false;
  bool nullable = true;
  for (;;) {
    const std::size_t at = token_.position;
    if (accept("NOT")) {
      expect("NULL");
      nullable = false;
    } else if (accept("NULL")) {
      nullable = true;
      c.said_null = true;
    } else if (accept("DEFAULT")) {
      has_default = true;
      if (is("NULL")) {
        default_null_at = token_.position;
        advance();
        default_value = integer ? Value{std::int64_t{0}} : Value{std::string()};
      } else {
        default_value = literal_default(integer);
        default_null_at.reset();
      }
    } else if (accept("UNIQUE")) {
      accept("KEY");
      unique_at = at;
    } else if (accept("COMMENT")) {
      comment();
    } else if (is("AUTO_INCREMENT")) {
      fail("a column attribute other than AUTO_INCREMENT (only id is auto-increment)");
    } else if (accept("PRIMARY")) {
      expect("KEY");
      primary_at = at;
    } else {
      break;
    }
  }
  if (!is_symbol(",") && !is_symbol(")")) fail("NOT NULL, NULL, DEFAULT, UNIQUE, PRIMARY KEY, COMMENT, , or )");
  if (default_null_at && !nullable) fail_at(*default_null_at, "a default other than NULL for a NOT NULL column (1067 Invalid default value)");
  c.nullable = nullable;
  c.null_by_default = nullable && (!has_default || default_null_at);
  c.has_default = has_default;
  return default_value;
}

// DEFAULT's value: integers for integer columns (also written '0', as mysqldump does),
// strings for text columns (a number becomes its digits, as MySQL converts it).
Value Parser::literal_default(bool integer) {
  if (token_.kind == Token::Kind::number) {
    Value v = integer ? Value{token_.number} : Value{token_.text};
    advance();
    return v;
  }
  if (token_.kind == Token::Kind::string) {
    if (!integer) {
      Value v = std::move(token_.text);
      advance();
      return v;
    }
    std::int64_t n = 0;
    const std::string& s = token_.text;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || error != std::errc() || end != s.data() + s.size()) fail("an integer default for a number column");
    advance();
    return n;
  }
  fail(integer ? "an integer default" : "a 'string' default");
}

// An optional (n) after a type: a display width, CHAR's length, fractional seconds.
void Parser::display_width() {
  if (!accept_symbol("(")) return;
  length();
  expect_symbol(")");
}

void Parser::length() {
  if (token_.kind != Token::Kind::number || token_.number < 0) fail("a length");
  advance();
}

void Parser::comment() {
  if (token_.kind != Token::Kind::string) fail("the comment's 'text'");
  advance();
}

// ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='...' and the like: `[DEFAULT] name [=] value`
// each, accepted and ignored (the model has one engine and compares bytes; AUTO_INCREMENT=n
// does not move the first id).
void Parser::table_options() {
  while (!at_end() && !is_symbol(";")) {
    accept("DEFAULT");
    if (accept("CHARACTER")) {
      expect("SET");
    } else if (token_.kind == Token::Kind::word) {
      advance();
    } else {
      fail("a table option (ENGINE=InnoDB, DEFAULT CHARSET=utf8mb4, ...) or the end of the statement");
    }
    accept_symbol("=");
    if (token_.kind != Token::Kind::word && token_.kind != Token::Kind::number && token_.kind != Token::Kind::string)
      fail("the table option's value");
    advance();
    accept_symbol(",");
  }
  finish("");
}

}  // namespace models::db::sql::mariadb
