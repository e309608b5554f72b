// An algorithm's own settings (Options::settings): "name=value" pairs
// separated by commas, read by its factory. Each setting is taken once by
// name; finish() refuses what is left, so a misspelt name is an error, not a
// default silently kept. Errors throw SettingError (algorithm.hpp), which
// BroadPhase::create() turns into a refusal.
//
//   SettingsReader s(options.settings);
//   config.cell_size = s.number("cell_size", 0.0, 0.0, 1e30, "multi-sap: cell_size must be 0 or finite > 0");
//   s.finish("multi-sap: settings are mode, cell_size, boxes_per_cell");
#pragma once

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "sapling/algorithm.hpp"

namespace sapling::detail {

class SettingsReader {
 public:
  explicit SettingsReader(std::string_view text) {
    for (bool more = !text.empty(); more;) {
      const std::size_t comma = text.find(',');
      const std::string_view item = text.substr(0, comma);
      more = comma != std::string_view::npos;  // then an item follows, if only an empty one
      text = more ? text.substr(comma + 1) : std::string_view{};
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
        throw SettingError{"a setting is not written name=value (settings are separated by commas)"};
      }
      for (const Item& seen : items_) {
        if (seen.name == item.substr(0, eq)) throw SettingError{"a setting is given twice"};
      }
      items_.push_back(Item{item.substr(0, eq), item.substr(eq + 1), false});
    }
  }

  /// The value of `name` as a number in [lo, hi] (`fallback` when absent);
  /// `why` if it is not one.
  double number(std::string_view name, double fallback, double lo, double hi, const char* why) {
    const std::string_view* text = take(name);
    if (text == nullptr) return fallback;
    double v = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (error != std::errc{} || end != text->data() + text->size() || !(v >= lo && v <= hi)) throw SettingError{why};
    return v;
  }

  /// The position of `name`'s value among `choices` (`fallback` when
  /// absent); `why` if it is none of them.
  std::size_t choice(std::string_view name, std::size_t fallback, std::initializer_list<std::string_view> choices,
                     const char* why) {
    const std::string_view* text = take(name);
    if (text == nullptr) return fallback;
    std::size_t i = 0;
    for (const std::string_view c : choices) {
      if (c == *text) return i;
      ++i;
    }
    throw SettingError{why};
  }

  /// Refuses with `why` if a setting was not taken (a name the algorithm
  /// does not know).
  void finish(const char* why) const {
    for (const Item& item : items_) {
      if (!item.taken) throw SettingError{why};
    }
  }

 private:
  struct Item {
    std::string_view name, value;
    bool taken;
  };
  const std::string_view* take(std::string_view name) {
    for (Item& item : items_) {
      if (item.name == name) {
        item.taken = true;
        return &item.value;
      }
    }
    return nullptr;
  }

  std::vector<Item> items_;
};

/// For the algorithms that have no settings: refuses any.
inline void no_settings(const Options& options) {
  SettingsReader(options.settings).finish("this algorithm has no settings (Options::settings must be empty)");
}

}  // namespace sapling::detail
