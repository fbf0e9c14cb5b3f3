// apps/tessel/cmd_swizzle.cpp -- `tessel swizzle`: the block -> tile map of a threadblock swizzle
// or tile scheduler, as a text table or an SVG, and the L2-locality figure (docs/schedules.md).
//
//   tessel swizzle --kind identity --log-tile 1 --tiles 4x4
//   tessel swizzle --kind persistent --tiles 8x6 --sms 4 --group 2 --svg p.svg
//   tessel swizzle --kind streamk --tiles 3x3 --k-iters 5 --sms 4
//   tessel swizzle --locality
//
// Every mapping printed here comes from include/tessel/schedule/, the functions a kernel calls;
// this file only formats. Bad arguments throw UsageError (one line, exit 2).
#include "command.hpp"

#include <tessel/schedule.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tessel::cli::UsageError;
using tessel::Dim3;
using tessel::GemmCoord;

constexpr char const* kUsage =
    "usage: tessel swizzle [--kind KIND] (--tiles MxN[xK] | --problem MxNxK [--tile MxNxK]) [options]\n"
    "       tessel swizzle --locality [--problem MxNxK] [--tile MxNxK] [--wave W]\n"
    "\n"
    "Prints the grid a swizzle or tile scheduler launches and which tile each block (or CTA)\n"
    "computes, as tables; --svg FILE also draws the tile grid coloured by launch order.\n"
    "\n"
    "kinds:\n"
    "  identity         GemmIdentityThreadblockSwizzle<N>: grid (tiles_m*2^L, ceil(tiles_n/2^L), k)\n"
    "  horizontal       GemmHorizontalThreadblockSwizzle: grid (tiles_n, tiles_m, k)\n"
    "  batched          GemmBatchedIdentityThreadblockSwizzle: grid (tiles_m, tiles_n, batch)\n"
    "  splitk           serial split-K: the identity swizzle with grid z = slice\n"
    "  splitk-parallel  parallel split-K: the horizontal swizzle with grid z = slice\n"
    "  persistent       persistent scheduler: min(SMs*CTAs/SM, tiles) CTAs walk the tiles\n"
    "  streamk          Stream-K: CTAs split all k-iterations evenly; partial tiles fixed up in order\n"
    "\n"
    "options:\n"
    "  --tiles MxN[xK]    the tiled shape (K: split-K slices or batch count, default 1)\n"
    "  --problem MxNxK    the problem in elements, cut by --tile (default tile 128x128x32)\n"
    "  --tile MxNxK       the tile in elements\n"
    "  --swizzle N        identity, splitk: the template's N, 1..8 (default 1); L = get_log_tile\n"
    "  --log-tile L       identity, splitk: use log tile L (0..8) instead of get_log_tile\n"
    "  --split-k S        identity, horizontal, splitk*: split-K slices (sets K of the tiled shape)\n"
    "  --batch B          batched, persistent, streamk: batch count (sets K of the tiled shape)\n"
    "  --k-iters I        splitk*, streamk: k-iterations per tile (default ceil(K/tile_k) from\n"
    "                     --problem, else 4)\n"
    "  --sms S            persistent, streamk: SM count (default 132)\n"
    "  --ctas-per-sm C    persistent, streamk: resident CTAs per SM (default 1)\n"
    "  --raster R         persistent, streamk: auto, m or n (default auto: along the dimension\n"
    "                     with fewer tiles)\n"
    "  --group G          persistent, streamk: raster band width in tiles, 1..8 (default 1)\n"
    "  --decomposition D  streamk: streamk (all tiles shared), hybrid (data-parallel full\n"
    "                     waves + stream-K for the last two), tail (data-parallel first, the\n"
    "                     last partial wave's tiles shared) or split-tail (data-parallel first,\n"
    "                     each of the last partial wave's tiles cut into equal K slices)\n"
    "  --locality         print the L2-locality figure: distinct A row + B column panels per\n"
    "                     wave (default 8192x8192x8192, tile 128x256x64, --wave 132)\n"
    "  --wave W           --locality: CTAs per wave (default 132)\n"
    "  --svg FILE         also write the map as an SVG drawing\n"
    "  --help             this text\n";

// Tables and drawings stay readable (and bounded) up to this many cells.
constexpr long long kMaxCells = 1 << 16;

// ---- argument parsing --------------------------------------------------------------------------

struct Options {
  std::map<std::string, std::string> values;  // option -> value ("" for flags)
  bool has(std::string const& k) const { return values.count(k) != 0; }
  std::string const& get(std::string const& k) const { return values.at(k); }
};

// Splits `--name value`, `--name=value` and flags; refuses unknown, repeated or valueless options.
Options parse_options(std::vector<std::string> const& args) {
  static std::vector<std::string> const with_value = {
      "--kind", "--tiles", "--problem", "--tile", "--swizzle", "--log-tile", "--split-k", "--batch", "--k-iters",
      "--sms", "--ctas-per-sm", "--raster", "--group", "--decomposition", "--wave", "--svg"};
  static std::vector<std::string> const flags = {"--locality", "--help", "-h"};
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    bool const takes = std::find(with_value.begin(), with_value.end(), name) != with_value.end();
    bool const flag = std::find(flags.begin(), flags.end(), name) != flags.end();
    if (!takes && !flag) {
      if (name.rfind("-", 0) == 0) throw UsageError("unknown option '" + name + "' (try: tessel swizzle --help)");
      throw UsageError("unexpected argument '" + name + "' (options start with --; try: tessel swizzle --help)");
    }
    if (o.has(name)) throw UsageError(name + " is given twice");
    if (flag) {
      if (value) throw UsageError(name + " takes no value");
      o.values[name] = "";
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value (try: tessel swizzle --help)");
      value = args[++i];
    }
    if (value->empty()) throw UsageError(name + " needs a non-empty value");
    o.values[name] = *value;
  }
  return o;
}

// An integer in [lo, hi], or a UsageError naming the option.
long long parse_int(std::string const& option, std::string const& text, long long lo, long long hi) {
  long long v = 0;
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == text.data() + text.size() && (v < lo || v > hi)))
    throw UsageError(option + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" + text + "'");
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError(option + ": '" + text + "' is not an integer");
  return v;
}

// "MxN" or "MxNxK" (K optional when allow_two); each extent in [lo, hi].
GemmCoord parse_shape(std::string const& option, std::string const& text, bool allow_two, long long default_k,
                      long long lo, long long hi) {
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : text) {
    if (ch == 'x' || ch == 'X') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  parts.push_back(cur);
  if (!(parts.size() == 3 || (allow_two && parts.size() == 2)))
    throw UsageError(option + ": '" + text + "' is not a shape; write " + (allow_two ? "MxN or MxNxK" : "MxNxK") +
                     ", e.g. " + (allow_two ? "4x4" : "8192x8192x4096"));
  long long const m = parse_int(option, parts[0], lo, hi);
  long long const n = parse_int(option, parts[1], lo, hi);
  long long const k = parts.size() == 3 ? parse_int(option, parts[2], lo, hi) : default_k;
  return GemmCoord(m, n, k);
}

// ---- text output -------------------------------------------------------------------------------

std::string coord2(long long a, long long b) { return std::to_string(a) + "," + std::to_string(b); }

// A table with a corner label, column headers 0..cols-1, row headers 0..rows-1 and the cells.
void print_table(std::string const& corner, long long rows, long long cols,
                 std::vector<std::string> const& cells) {
  size_t width = corner.size();
  for (auto const& c : cells) width = std::max(width, c.size());
  width = std::max(width, std::to_string(std::max(rows, cols)).size());
  auto pad = [&](std::string const& s) { return std::string(width + 2 - s.size(), ' ') + s; };
  std::string line = pad(corner);
  for (long long c = 0; c < cols; ++c) line += pad(std::to_string(c));
  std::printf("%s\n", line.c_str());
  for (long long r = 0; r < rows; ++r) {
    line = pad(std::to_string(r));
    for (long long c = 0; c < cols; ++c) line += pad(cells[r * cols + c]);
    std::printf("%s\n", line.c_str());
  }
}

// ---- SVG output --------------------------------------------------------------------------------

// The tile grid (rows m, columns n) of one batch or slice layer, each cell with a label and a
// colour rank in [0, 1) (launch order); unlabeled cells are left white.
struct Drawing {
  std::string title;
  long long rows = 0;
  long long cols = 0;
  std::vector<std::string> labels;  // rows * cols
  std::vector<double> rank;         // rows * cols, < 0: no colour
};

// `s` with XML's five special characters escaped.
std::string xml_escape(std::string const& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Writes the layers one below the other as an SVG file; throws std::runtime_error when it cannot.
void write_svg(std::string const& path, std::vector<Drawing> const& layers) {
  int const cell = 44;
  int const margin = 30;
  int const title_h = 24;
  long long width = 2 * margin;
  long long height = margin;
  for (auto const& d : layers) {
    width = std::max(width, 2 * margin + d.cols * cell);
    height += title_h + d.rows * cell + margin;
  }
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"monospace\" font-size=\"11\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  long long y0 = margin;
  for (auto const& d : layers) {
    os << "<text x=\"" << margin << "\" y=\"" << y0 + 14 << "\" font-size=\"13\">" << xml_escape(d.title)
       << "</text>\n";
    y0 += title_h;
    for (long long r = 0; r < d.rows; ++r) {
      for (long long c = 0; c < d.cols; ++c) {
        long long const i = r * d.cols + c;
        long long const x = margin + c * cell;
        long long const y = y0 + r * cell;
        std::string fill = "white";
        if (d.rank[i] >= 0) {
          int const hue = static_cast<int>(240.0 * (1.0 - d.rank[i]));  // blue (first) .. red (last)
          fill = "hsl(" + std::to_string(hue) + ",70%,78%)";
        }
        os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell << "\" height=\"" << cell << "\" fill=\""
           << fill << "\" stroke=\"black\" stroke-width=\"1\"/>\n";
        os << "<text x=\"" << x + cell / 2 << "\" y=\"" << y + cell / 2 + 4 << "\" text-anchor=\"middle\">"
           << xml_escape(d.labels[i]) << "</text>\n";
      }
    }
    y0 += d.rows * cell + margin;
  }
  os << "</svg>\n";
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open '" + path + "' for writing");
  f << os.str();
  if (!f.flush()) throw std::runtime_error("cannot write '" + path + "'");
}

// ---- the one-block-per-tile swizzles -----------------------------------------------------------

// A swizzle, type-erased for printing: grid, tile of a block.
struct BlockMap {
  std::string name;
  GemmCoord tiled;
  Dim3 grid;
  std::function<GemmCoord(Dim3)> tile_of;
};

// The BlockMap of Swizzle for `tiled`, with its own log tile or a forced one (--log-tile).
template <class Swizzle>
BlockMap make_block_map(std::string name, GemmCoord tiled, std::optional<int> forced_log_tile) {
  int const log_tile = forced_log_tile ? *forced_log_tile : Swizzle::get_log_tile(tiled);
  Dim3 const grid = forced_log_tile ? tessel::swizzled_grid_shape(tiled, log_tile) : Swizzle::get_grid_shape(tiled);
  return BlockMap{std::move(name), tiled, grid,
                  [log_tile](Dim3 b) { return Swizzle::get_tile_offset(log_tile, b); }};
}

// Refuses (UsageError) maps too large to print or draw.
void check_table_size(long long cells, char const* what) {
  if (cells > kMaxCells)
    throw UsageError(std::string("the ") + what + " has " + std::to_string(cells) + " cells, more than the " +
                     std::to_string(kMaxCells) + " this command draws; use fewer tiles (the locality figure, "
                     "--locality, handles large problems)");
}

// Prints a one-block-per-tile swizzle: its grid, the block -> tile table and the tile <- block table
// of every z layer; draws the tile tables to `svg` when given.
void show_block_map(BlockMap const& map, std::optional<std::string> const& svg) {
  Dim3 const g = map.grid;
  check_table_size(g.volume() + map.tiled.product(), "map");
  long long noop = 0;
  std::vector<std::vector<std::string>> tile_cells(map.tiled.k(),
                                                   std::vector<std::string>(map.tiled.m() * map.tiled.n(), "?"));
  std::vector<std::vector<double>> tile_rank(map.tiled.k(), std::vector<double>(map.tiled.m() * map.tiled.n(), -1));
  std::vector<std::vector<std::string>> block_cells(g.z, std::vector<std::string>(g.x * g.y));
  for (long long p = 0; p < g.volume(); ++p) {
    Dim3 const b = tessel::block_index_at(g, p);
    GemmCoord const t = map.tile_of(b);
    std::string& bc = block_cells[b.z][static_cast<long long>(b.y) * g.x + b.x];
    if (!tessel::tile_in_bounds(map.tiled, t)) {
      bc = "-";
      ++noop;
      continue;
    }
    bc = coord2(t.m(), t.n()) + (map.tiled.k() > 1 ? "," + std::to_string(t.k()) : "");
    long long const i = t.m() * map.tiled.n() + t.n();
    tile_cells[t.k()][i] = coord2(b.x, b.y);
    tile_rank[t.k()][i] = static_cast<double>(p) / static_cast<double>(g.volume());
  }
  std::printf("%s: tiled shape %lldx%lldx%lld (tiles m x n x k)\n", map.name.c_str(), map.tiled.m(), map.tiled.n(),
              map.tiled.k());
  std::printf("grid (%u,%u,%u): %lld blocks, %lld tiles, %lld no-op blocks\n", g.x, g.y, g.z, g.volume(),
              map.tiled.product(), noop);
  std::vector<Drawing> layers;
  for (unsigned z = 0; z < g.z; ++z) {
    std::string const layer = g.z > 1 ? " z=" + std::to_string(z) : "";
    std::printf("\nblock -> tile%s (rows: blockIdx.y, columns: blockIdx.x; cell: tile m,n%s; -: no-op block)\n",
                layer.c_str(), map.tiled.k() > 1 ? ",k" : "");
    print_table("y\\x", g.y, g.x, block_cells[z]);
  }
  for (long long k = 0; k < map.tiled.k(); ++k) {
    std::string const layer = map.tiled.k() > 1 ? " k=" + std::to_string(k) : "";
    std::printf("\ntile <- block%s (rows: tile m, columns: tile n; cell: blockIdx.x,y)\n", layer.c_str());
    print_table("m\\n", map.tiled.m(), map.tiled.n(), tile_cells[k]);
    layers.push_back({map.name + layer + ": tile (row m, column n) <- blockIdx x,y; colour = launch order",
                      map.tiled.m(), map.tiled.n(), tile_cells[k], tile_rank[k]});
  }
  if (svg) {
    write_svg(*svg, layers);
    std::printf("\nwrote %s\n", svg->c_str());
  }
}

// ---- persistent and Stream-K -------------------------------------------------------------------

std::string raster_name(tessel::RasterOrder r) { return r == tessel::RasterOrder::kAlongM ? "along-M" : "along-N"; }

// Prints a persistent schedule: grid, the CTA.step of every tile, and each CTA's walk.
void show_persistent(tessel::PersistentTileScheduler const& s, tessel::PersistentArguments const& args,
                     std::optional<std::string> const& svg) {
  GemmCoord const tiled = s.tiled_shape();
  check_table_size(tiled.product(), "tile grid");
  std::printf("persistent tile scheduler: tiled shape %lldx%lldx%lld (tiles m x n x batch)\n", tiled.m(), tiled.n(),
              tiled.k());
  std::printf("grid (%d,1,1): min(%d SMs x %d CTAs/SM, %lld tiles); raster %s%s, group %d\n", s.grid_size(),
              args.sm_count, args.ctas_per_sm, s.tile_count(), raster_name(s.raster().order).c_str(),
              args.raster == tessel::RasterOrderOption::kHeuristic ? " (heuristic)" : "", s.raster().group);
  std::printf("CTA c walks linear tiles c, c+%d, c+%d, ...; cell CTA.step\n", s.grid_size(), 2 * s.grid_size());
  long long const per = tiled.m() * tiled.n();
  std::vector<std::vector<std::string>> cells(tiled.k(), std::vector<std::string>(per, "?"));
  std::vector<std::vector<double>> rank(tiled.k(), std::vector<double>(per, -1));
  for (int c = 0; c < s.grid_size(); ++c) {
    long long step = 0;
    for (long long t = s.first_tile(c); s.is_valid(t); t = s.next_tile(t), ++step) {
      GemmCoord const x = s.tile_offset(t);
      cells[x.k()][x.m() * tiled.n() + x.n()] = std::to_string(c) + "." + std::to_string(step);
      rank[x.k()][x.m() * tiled.n() + x.n()] = static_cast<double>(t) / static_cast<double>(s.tile_count());
    }
  }
  std::vector<Drawing> layers;
  for (long long b = 0; b < tiled.k(); ++b) {
    std::string const layer = tiled.k() > 1 ? " batch " + std::to_string(b) : "";
    std::printf("\ntile <- CTA.step%s (rows: tile m, columns: tile n)\n", layer.c_str());
    print_table("m\\n", tiled.m(), tiled.n(), cells[b]);
    layers.push_back({"persistent" + layer + ": tile (row m, column n) <- CTA.step; colour = linear tile id",
                      tiled.m(), tiled.n(), cells[b], rank[b]});
  }
  std::printf("\nCTA -> tiles (m,n%s), in order\n", tiled.k() > 1 ? ",batch" : "");
  for (int c = 0; c < s.grid_size(); ++c) {
    std::string line = "  CTA " + std::to_string(c) + ":";
    for (long long t = s.first_tile(c); s.is_valid(t); t = s.next_tile(t)) {
      GemmCoord const x = s.tile_offset(t);
      line += " (" + coord2(x.m(), x.n()) + (tiled.k() > 1 ? "," + std::to_string(x.k()) : "") + ")";
    }
    std::printf("%s\n", line.c_str());
  }
  if (svg) {
    write_svg(*svg, layers);
    std::printf("\nwrote %s\n", svg->c_str());
  }
}

// Prints a Stream-K schedule: each CTA's units and their fix-up roles, the owner[+peers] of every
// tile, and the fix-up order.
void show_stream_k(tessel::StreamKScheduler const& s, tessel::StreamKArguments const& args,
                   std::optional<std::string> const& svg) {
  GemmCoord const tiled = s.tiled_shape();
  check_table_size(tiled.product(), "tile grid");
  std::printf("Stream-K: tiled shape %lldx%lldx%lld (tiles m x n x batch), %lld k-iterations per tile\n", tiled.m(),
              tiled.n(), tiled.k(), s.k_iterations());
  std::printf("grid (%d,1,1) from %d SMs x %d CTAs/SM; decomposition %s: %lld stream-K tiles (%lld iterations), "
              "%lld data-parallel tiles; raster %s, group %d\n",
              s.grid_size(), args.sm_count, args.ctas_per_sm,
              args.decomposition == tessel::StreamKDecomposition::kHybrid ? "hybrid"
              : args.decomposition == tessel::StreamKDecomposition::kTail      ? "tail"
              : args.decomposition == tessel::StreamKDecomposition::kSplitTail ? "split-tail"
                                                                                : "streamk",
              s.sk_tile_count(),
              s.sk_iteration_count(), s.tile_count() - s.sk_tile_count(), raster_name(s.raster().order).c_str(),
              s.raster().group);
  std::printf("\nCTA -> work units, in order (k ranges are k-iterations of the tile)\n");
  for (int c = 0; c < s.grid_size(); ++c) {
    std::string line = "  CTA " + std::to_string(c) + " [" + std::to_string(s.iteration_begin(c)) + "," +
                       std::to_string(s.iteration_end(c)) + "):";
    long long const first_sk = s.sk_unit_offset(c);  // a tail schedule runs its data-parallel tiles first
    for (long long i = 0; i < s.unit_count(c); ++i) {
      tessel::StreamKWork const w = s.unit(c, i);
      line += (i ? " |" : "") + std::string(" tile ") + std::to_string(w.tile) + " (" +
              coord2(w.tile_offset.m(), w.tile_offset.n()) + ") k[" + std::to_string(w.k_begin) + "," +
              std::to_string(w.k_end) + ")";
      if (i < first_sk || i >= first_sk + s.sk_unit_count(c)) {
        line += " data-parallel";
      } else if (!w.finishes_tile) {
        line += " partial->slot " + std::to_string(c);
      } else if (w.first_peer > w.last_peer) {
        line += " complete";
      } else {
        line += " finishes, adds CTA " + std::to_string(w.first_peer) +
                (w.last_peer > w.first_peer ? ".." + std::to_string(w.last_peer) : "");
      }
    }
    std::printf("%s\n", line.c_str());
  }
  long long const per = tiled.m() * tiled.n();
  std::vector<std::vector<std::string>> cells(tiled.k(), std::vector<std::string>(per, "?"));
  std::vector<std::vector<double>> rank(tiled.k(), std::vector<double>(per, -1));
  std::vector<std::string> fixups;
  for (long long t = 0; t < s.tile_count(); ++t) {
    GemmCoord const x = s.tile_offset(t);
    int const owner = s.tile_owner(t);
    int const last = s.tile_last_contributor(t);
    std::string cell = std::to_string(owner);
    if (last > owner) cell += "+" + (last == owner + 1 ? std::to_string(last) : std::to_string(owner + 1) + ".." + std::to_string(last));
    cells[x.k()][x.m() * tiled.n() + x.n()] = cell;
    rank[x.k()][x.m() * tiled.n() + x.n()] = s.grid_size() > 0 ? static_cast<double>(owner) / s.grid_size() : 0.0;
    if (last > owner) {
      std::string f = "tile " + std::to_string(t) + ": CTA " + std::to_string(owner) + " adds";
      for (int p = owner + 1; p <= last; ++p) f += " " + std::to_string(p);
      fixups.push_back(f);
    }
  }
  std::vector<Drawing> layers;
  for (long long b = 0; b < tiled.k(); ++b) {
    std::string const layer = tiled.k() > 1 ? " batch " + std::to_string(b) : "";
    std::printf("\ntile <- owner[+peers]%s (rows: tile m, columns: tile n; the owner finishes the tile)\n",
                layer.c_str());
    print_table("m\\n", tiled.m(), tiled.n(), cells[b]);
    layers.push_back({"Stream-K" + layer + ": tile (row m, column n) <- owner CTA [+ peers]; colour = owner",
                      tiled.m(), tiled.n(), cells[b], rank[b]});
  }
  std::printf("\nfix-up order (owner adds the peers' partials in this order, then runs the epilogue):\n");
  if (fixups.empty()) std::printf("  none: every tile is computed whole by one CTA\n");
  for (auto const& f : fixups) std::printf("  %s\n", f.c_str());
  if (svg) {
    write_svg(*svg, layers);
    std::printf("\nwrote %s\n", svg->c_str());
  }
}

// ---- the L2-locality figure --------------------------------------------------------------------

// Prints l2_locality_figure(problem, tile, wave) as a table, one row per launch order.
void show_locality(GemmCoord problem, GemmCoord tile, int wave) {
  auto const rows = tessel::l2_locality_figure(problem, tile, wave);
  GemmCoord const tiled = tessel::GemmIdentityThreadblockSwizzle<1>::get_tiled_shape(problem, tile, 1);
  long long const waves = rows.empty() ? 0 : static_cast<long long>(rows.front().waves.size());
  double const a_mib = static_cast<double>(tile.m()) * problem.k() * 2 / (1024.0 * 1024.0);
  double const b_mib = static_cast<double>(tile.n()) * problem.k() * 2 / (1024.0 * 1024.0);
  std::printf("L2 locality: %lldx%lldx%lld problem, %lldx%lldx%lld tiles -> %lldx%lld tiles, waves of %d CTAs "
              "(%lld waves)\n",
              problem.m(), problem.n(), problem.k(), tile.m(), tile.n(), tile.k(), tiled.m(), tiled.n(), wave, waves);
  std::printf("per wave: distinct A row panels (%lld x K) + B column panels (K x %lld); bf16 panels at K=%lld: "
              "A %.2f MiB, B %.2f MiB\n\n",
              tile.m(), tile.n(), problem.k(), a_mib, b_mib);
  size_t name_w = 5;
  for (auto const& r : rows) name_w = std::max(name_w, r.order.size());
  std::printf("%-*s  %7s %5s %6s %6s %9s  %s\n", static_cast<int>(name_w), "order", "mean", "max", "A", "B",
              "MiB/wave", "panels per wave");
  for (auto const& r : rows) {
    std::string per_wave;
    for (auto const& w : r.waves) {
      if (!per_wave.empty()) per_wave += ' ';
      per_wave += std::to_string(w.panels());
    }
    double const mib = r.mean_a_panels() * a_mib + r.mean_b_panels() * b_mib;
    std::printf("%-*s  %7.1f %5lld %6.1f %6.1f %9.0f  %s\n", static_cast<int>(name_w), r.order.c_str(),
                r.mean_panels(), r.max_panels(), r.mean_a_panels(), r.mean_b_panels(), mib, per_wave.c_str());
  }
}

// ---- the command -------------------------------------------------------------------------------

// Refuses `option` when given with a kind it does not apply to; what() says where it applies.
template <class F>
void require_kinds(Options const& o, std::string const& option, std::string const& kind,
                   std::vector<std::string> const& allowed, F&& what) {
  if (!o.has(option)) return;
  if (std::find(allowed.begin(), allowed.end(), kind) == allowed.end())
    throw UsageError(option + " does not apply to --kind " + kind + " (" + what() + ")");
}

// `tessel swizzle ARGS`: see kUsage. Library refusals (ScheduleError) become UsageErrors (exit 2).
int run_swizzle(std::vector<std::string> const& args) {
  Options const o = parse_options(args);
  if (o.has("--help") || o.has("-h")) {
    std::printf("%s", kUsage);
    return 0;
  }
  constexpr long long kMaxTiles = 4096;      // per extent of a tiled shape drawn here
  constexpr long long kMaxExtent = 1LL << 40;  // problem / tile extents in elements
  std::optional<std::string> const svg = o.has("--svg") ? std::optional<std::string>(o.get("--svg")) : std::nullopt;

  try {
    if (o.has("--locality")) {
      for (char const* opt : {"--kind", "--tiles", "--swizzle", "--log-tile", "--split-k", "--batch", "--k-iters",
                              "--sms", "--ctas-per-sm", "--raster", "--group", "--decomposition", "--svg"})
        if (o.has(opt)) throw UsageError(std::string(opt) + " does not apply to --locality");
      GemmCoord const problem = o.has("--problem") ? parse_shape("--problem", o.get("--problem"), false, 1, 1, kMaxExtent)
                                                   : GemmCoord(8192, 8192, 8192);
      GemmCoord const tile = o.has("--tile") ? parse_shape("--tile", o.get("--tile"), false, 1, 1, kMaxExtent)
                                             : GemmCoord(128, 256, 64);
      int const wave = static_cast<int>(o.has("--wave") ? parse_int("--wave", o.get("--wave"), 1, 1 << 20) : 132);
      GemmCoord const tiled = tessel::GemmIdentityThreadblockSwizzle<1>::get_tiled_shape(problem, tile, 1);
      if (tiled.m() * tiled.n() > (1LL << 24))
        throw UsageError("--locality: " + std::to_string(tiled.m() * tiled.n()) +
                         " tiles is more than this figure handles (2^24); use larger tiles");
      show_locality(problem, tile, wave);
      return 0;
    }
    if (o.has("--wave")) throw UsageError("--wave applies only to --locality");

    std::string const kind = o.has("--kind") ? o.get("--kind") : "identity";
    static std::vector<std::string> const kinds = {"identity", "horizontal",  "batched", "splitk",
                                                   "splitk-parallel", "persistent", "streamk"};
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
      throw UsageError("--kind: unknown kind '" + kind +
                       "' (identity, horizontal, batched, splitk, splitk-parallel, persistent, streamk)");
    bool const split_kind = kind == "splitk" || kind == "splitk-parallel";
    require_kinds(o, "--swizzle", kind, {"identity", "splitk"}, [] { return "it applies to identity, splitk"; });
    require_kinds(o, "--log-tile", kind, {"identity", "splitk"}, [] { return "it applies to identity, splitk"; });
    require_kinds(o, "--split-k", kind, {"identity", "horizontal", "splitk", "splitk-parallel"},
                  [] { return "it applies to identity, horizontal, splitk, splitk-parallel"; });
    require_kinds(o, "--batch", kind, {"batched", "persistent", "streamk"},
                  [] { return "it applies to batched, persistent, streamk"; });
    require_kinds(o, "--k-iters", kind, {"splitk", "splitk-parallel", "streamk"},
                  [] { return "it applies to splitk, splitk-parallel, streamk"; });
    for (char const* opt : {"--sms", "--ctas-per-sm", "--raster", "--group"})
      require_kinds(o, opt, kind, {"persistent", "streamk"}, [] { return "it applies to persistent, streamk"; });
    require_kinds(o, "--decomposition", kind, {"streamk"}, [] { return "it applies to streamk"; });
    if (o.has("--swizzle") && o.has("--log-tile"))
      throw UsageError("give --swizzle N (the swizzle picks its log tile) or --log-tile L, not both");

    // The tiled shape.
    if (o.has("--tiles") && o.has("--problem"))
      throw UsageError("give --tiles MxN[xK] (in tiles) or --problem MxNxK (in elements), not both");
    if (!o.has("--tiles") && !o.has("--problem"))
      throw UsageError("no shape: give --tiles MxN[xK] or --problem MxNxK (try: tessel swizzle --help)");
    if (o.has("--tile") && !o.has("--problem")) throw UsageError("--tile needs --problem (--tiles is already in tiles)");
    GemmCoord tiled;
    std::optional<long long> k_iters_from_problem;
    if (o.has("--tiles")) {
      tiled = parse_shape("--tiles", o.get("--tiles"), true, 1, 1, kMaxTiles);
    } else {
      GemmCoord const problem = parse_shape("--problem", o.get("--problem"), false, 1, 0, kMaxExtent);
      GemmCoord const tile = o.has("--tile") ? parse_shape("--tile", o.get("--tile"), false, 1, 1, kMaxExtent)
                                             : GemmCoord(128, 128, 32);
      tiled = tessel::GemmIdentityThreadblockSwizzle<1>::get_tiled_shape(problem, tile, 1);
      k_iters_from_problem = (problem.k() + tile.k() - 1) / tile.k();
      if (tiled.m() < 1 || tiled.n() < 1) throw UsageError("--problem: M and N must be >= 1 to have tiles to draw");
      if (tiled.m() > kMaxTiles || tiled.n() > kMaxTiles)
        throw UsageError("--problem: " + std::to_string(tiled.m()) + "x" + std::to_string(tiled.n()) +
                         " tiles is more than this command draws (" + std::to_string(kMaxTiles) +
                         " per extent); use larger tiles");
    }
    if (o.has("--split-k")) tiled = GemmCoord(tiled.m(), tiled.n(), parse_int("--split-k", o.get("--split-k"), 1, 64));
    if (o.has("--batch")) tiled = GemmCoord(tiled.m(), tiled.n(), parse_int("--batch", o.get("--batch"), 1, 1024));
    long long const k_iters = o.has("--k-iters") ? parse_int("--k-iters", o.get("--k-iters"), 1, 1 << 20)
                                                 : k_iters_from_problem.value_or(4);

    if (kind == "identity" || kind == "splitk") {
      std::optional<int> forced;
      std::string name;
      if (o.has("--log-tile")) {
        forced = static_cast<int>(parse_int("--log-tile", o.get("--log-tile"), 0, 8));
        name = std::string(kind == "splitk" ? "GemmSplitKIdentityThreadblockSwizzle" : "GemmIdentityThreadblockSwizzle") +
               ", log_tile " + std::to_string(*forced);
      }
      int const n = static_cast<int>(o.has("--swizzle") ? parse_int("--swizzle", o.get("--swizzle"), 1, 8) : 1);
      BlockMap map;
      auto pick = [&]<int N>(std::integral_constant<int, N>) {
        using S = tessel::GemmIdentityThreadblockSwizzle<N>;
        if (name.empty())
          name = std::string(kind == "splitk" ? "GemmSplitKIdentityThreadblockSwizzle<" : "GemmIdentityThreadblockSwizzle<") +
                 std::to_string(N) + ">, log_tile " + std::to_string(S::get_log_tile(tiled));
        map = make_block_map<S>(name, tiled, forced);
      };
      switch (n) {
        case 1: pick(std::integral_constant<int, 1>{}); break;
        case 2: pick(std::integral_constant<int, 2>{}); break;
        case 3: pick(std::integral_constant<int, 3>{}); break;
        case 4: pick(std::integral_constant<int, 4>{}); break;
        case 5: pick(std::integral_constant<int, 5>{}); break;
        case 6: pick(std::integral_constant<int, 6>{}); break;
        case 7: pick(std::integral_constant<int, 7>{}); break;
        default: pick(std::integral_constant<int, 8>{}); break;
      }
      if (!tessel::fits_cuda_grid(map.grid)) throw UsageError("the grid does not fit CUDA's grid limits; use fewer tiles");
      show_block_map(map, svg);
    } else if (kind == "horizontal" || kind == "splitk-parallel") {
      show_block_map(make_block_map<tessel::GemmHorizontalThreadblockSwizzle>(
                         kind == "horizontal" ? "GemmHorizontalThreadblockSwizzle" : "GemmSplitKHorizontalThreadblockSwizzle",
                         tiled, std::nullopt),
                     svg);
    } else if (kind == "batched") {
      show_block_map(make_block_map<tessel::GemmBatchedIdentityThreadblockSwizzle>("GemmBatchedIdentityThreadblockSwizzle",
                                                                                   tiled, std::nullopt),
                     svg);
    }
    if (split_kind) {
      auto const part = tessel::SplitKPartition::make(k_iters, 1, static_cast<int>(tiled.k()));
      std::printf("\nsplit-K: %lld k-iterations per tile in %d slices (%s):\n", k_iters, part.slices,
                  kind == "splitk" ? "serial" : "parallel");
      for (int sl = 0; sl < part.slices; ++sl) {
        auto const r = part.iteration_range(sl);
        std::printf("  slice %d: k-iterations [%lld,%lld)\n", sl, r.begin, r.end);
      }
      if (kind == "splitk")
        std::printf("fix-up: slice s adds its partial to D after slice s-1, in order 0..%d; slice %d runs the epilogue\n",
                    part.slices - 1, part.slices - 1);
      else
        std::printf("fix-up: slice s writes workspace slot s; the reduction sums slots 0..%d in order, then the "
                    "epilogue\n",
                    part.slices - 1);
    }
    if (kind == "persistent" || kind == "streamk") {
      int const sms = static_cast<int>(o.has("--sms") ? parse_int("--sms", o.get("--sms"), 1, 1 << 16) : 132);
      int const cps = static_cast<int>(o.has("--ctas-per-sm") ? parse_int("--ctas-per-sm", o.get("--ctas-per-sm"), 1, 64) : 1);
      int const group = static_cast<int>(o.has("--group") ? parse_int("--group", o.get("--group"), 1, 8) : 1);
      tessel::RasterOrderOption raster = tessel::RasterOrderOption::kHeuristic;
      if (o.has("--raster")) {
        std::string const r = o.get("--raster");
        if (r == "m" || r == "M") raster = tessel::RasterOrderOption::kAlongM;
        else if (r == "n" || r == "N") raster = tessel::RasterOrderOption::kAlongN;
        else if (r != "auto") throw UsageError("--raster: '" + r + "' is not one of auto, m, n");
      }
      if (kind == "persistent") {
        tessel::PersistentArguments a{sms, cps, raster, group};
        show_persistent(tessel::PersistentTileScheduler::make(tiled, a), a, svg);
      } else {
        tessel::StreamKDecomposition d = tessel::StreamKDecomposition::kStreamK;
        if (o.has("--decomposition")) {
          std::string const v = o.get("--decomposition");
          if (v == "hybrid") d = tessel::StreamKDecomposition::kHybrid;
          else if (v == "tail") d = tessel::StreamKDecomposition::kTail;
          else if (v == "split-tail") d = tessel::StreamKDecomposition::kSplitTail;
          else if (v != "streamk")
            throw UsageError("--decomposition: '" + v + "' is not one of streamk, hybrid, tail, split-tail");
        }
        tessel::StreamKArguments a{sms, cps, raster, group, d};
        show_stream_k(tessel::StreamKScheduler::make(tiled, k_iters, a), a, svg);
      }
    }
  } catch (tessel::ScheduleError const& e) {
    throw UsageError(e.what());
  }
  return 0;
}

tessel::cli::Register reg{{"swizzle", "block -> tile maps of threadblock swizzles and tile schedulers; L2 locality",
                           run_swizzle}};

}  // namespace
