// Key bindings (input.hpp).
#include "input.hpp"

namespace sapling::demo {

Command command_for_key(SDL_Keycode key, bool shift) {
  if (key >= SDLK_1 && key <= SDLK_6) return {Action::kScene, static_cast<int>(key - SDLK_1)};
  switch (key) {
    case SDLK_ESCAPE:
    case SDLK_q:
      return {Action::kQuit};
    case SDLK_a:
      return {shift ? Action::kPreviousAlgorithm : Action::kNextAlgorithm};
    case SDLK_SPACE:
      return {Action::kPause};
    case SDLK_s:
      return {Action::kStep};
    case SDLK_EQUALS:
    case SDLK_PLUS:
    case SDLK_KP_PLUS:
      return {Action::kMore};
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
      return {Action::kFewer};
    case SDLK_RIGHTBRACKET:
      return {Action::kMoreMoving};
    case SDLK_LEFTBRACKET:
      return {Action::kLessMoving};
    case SDLK_p:
      return {Action::kTogglePairs};
    case SDLK_e:
      return {Action::kToggleStructure};
    case SDLK_g:
      return {Action::kToggleGraph};
    case SDLK_h:
      return {Action::kToggleHelp};
    case SDLK_b:
      return {Action::kBurst};
    case SDLK_r:
      return {Action::kReset};
    default:
      return {};
  }
}

std::string_view help_line() {
  return "A/SHIFT-A ALGORITHM  1-6 SCENE  SPACE PAUSE  S STEP  +/- COUNT  [/] MOVING  P PAIRS  E ENDPOINTS  "
         "G GRAPH  H HELP  CLICK/B BURST  R RESET  Q QUIT";
}

}  // namespace sapling::demo
