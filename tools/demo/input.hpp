// The demo's keys: what each does, and the help line that lists them.
#pragma once

#include <SDL.h>

#include <string_view>

namespace sapling::demo {

/// What a key asks for.
enum class Action : std::uint8_t {
  kNone,
  kQuit,
  kNextAlgorithm,
  kPreviousAlgorithm,
  kPause,
  kStep,
  kScene,  ///< Command::value: the scene's index in scene_names()
  kMore,
  kFewer,
  kMoreMoving,
  kLessMoving,
  kTogglePairs,
  kToggleStructure,
  kToggleGraph,
  kToggleHelp,
  kBurst,  ///< at the mouse
  kReset,
};

/// An action and its argument.
struct Command {
  Action action = Action::kNone;  ///< what to do
  int value = 0;                  ///< the scene index for kScene
};

/// The command bound to `key` (kNone if none).
Command command_for_key(SDL_Keycode key, bool shift);
/// One line naming every key.
std::string_view help_line();

}  // namespace sapling::demo
