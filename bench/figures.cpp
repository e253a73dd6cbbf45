#include "bench/figures.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "reports/report.hpp"

namespace bench {
namespace {

std::string shown(double v) {
  if (std::fabs(v) >= 1e5) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 100) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3f}", v);
}

void write(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp, std::ios::binary) << text;
  std::filesystem::rename(tmp, path);
}

const Figure* find(const std::vector<Figure>& figures, const std::string& name) {
  for (const auto& f : figures)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

Figure figure(std::string name, std::string what, std::optional<double> value, const char* op, double bound,
              std::string note) {
  Figure f{std::move(name), std::move(what), value, std::move(note), "", std::nullopt};
  if (op != nullptr) {
    f.target = fmt::format("{} {}", op, shown(bound));
    if (value) f.met = std::string(op) == ">=" ? *value >= bound : (std::string(op) == "<=" ? *value <= bound : *value < bound);
  }
  return f;
}

void report(const std::vector<Figure>& figures, const std::string& machine) {
  std::string table = "| figure | value | target | met |\n|---|---|---|---|\n";
  for (const auto& f : figures)
    table += fmt::format("| {} (`{}`) | {} | {} | {} |\n", f.what, f.name, f.value ? shown(*f.value) : "missing: " + f.note,
                         f.target.empty() ? "" : f.target, f.met ? (*f.met ? "yes" : "**no**") : "");
  fmt::print("{}\nmachine: {}\n\n", table, machine);
  for (const auto& f : figures) {
    if (f.value)
      fmt::print("{}: {}\n", f.name, shown(*f.value));
    else
      fmt::print("{}: missing ({})\n", f.name, f.note);
  }

  const std::string folder = "reports/out/bench";
  std::filesystem::create_directories(folder);
  nlohmann::json j;
  j["machine"] = machine;
  for (const auto& f : figures) {
    nlohmann::json one{{"what", f.what}};
    if (f.value) {
      one["value"] = *f.value;
    } else {
      one["missing"] = f.note;
    }
    if (!f.note.empty() && f.value) one["note"] = f.note;
    if (!f.target.empty()) one["target"] = f.target;
    if (f.met) one["met"] = *f.met;
    j["figures"][f.name] = one;
  }
  write(folder + "/figures.json", j.dump(2) + "\n");
  write(folder + "/bench.md", "# make bench\n\n" + table + "\nmachine: " + machine +
                                  "\n\n![RPC workload, messages per second](rpc.png)\n");

  // The RPC workload side by side: locksim, the callback loop over the same queue, the peers.
  std::string dat;
  int bars = 0;
  for (const auto& [name, label] : std::vector<std::pair<std::string, std::string>>{
           {"rpc.callback_events_per_s", "callback loop"},
           {"peers.rpc.locksim_msgs_per_s", "locksim"},
           {"peers.rpc.simgrid_msgs_per_s", "SimGrid"},
           {"peers.rpc.simpy_msgs_per_s", "SimPy 2"}}) {
    const Figure* f = find(figures, name);
    if (f == nullptr || !f->value) continue;  // a missing peer gets no bar
    dat += fmt::format("{} \"{}\" {:.0f}\n", bars++, label, *f->value);
  }
  write(folder + "/rpc.dat", dat);
  write(folder + "/rpc.gp",
        "set terminal pngcairo size 800,480\nset output 'rpc.png.tmp'\n"
        "set title '100 clients calling 1 server, uniform 1-100 us links'\n"
        "set ylabel 'simulated messages per second (log)'\nset logscale y\nset yrange [1e4:*]\n"
        "set style fill solid 0.7\nset boxwidth 0.6\nset grid ytics\nunset key\n"
        "plot 'rpc.dat' using 1:3:xtic(2) with boxes lc rgb '#4477aa', "
        "'' using 1:3:(sprintf('%.3g', $3)) with labels offset 0,1\n");
  if (const auto plotted = locksim::reports::run_gnuplot(folder, "rpc.gp")) {
    std::filesystem::rename(folder + "/rpc.png.tmp", folder + "/rpc.png");
    fmt::print("\nwritten: {}/bench.md, figures.json, rpc.png\n", folder);
  } else {
    fmt::print("\nwritten: {}/bench.md, figures.json (no chart: {})\n", folder, plotted.why);
  }
}

}  // namespace bench
