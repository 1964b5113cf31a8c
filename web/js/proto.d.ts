// Generated from proto/*.schema.json by crates/carcassonne-server/tests/web_client.rs; do not edit.
// Regenerate: UPDATE_WEB_TYPES=1 cargo test -p carcassonne-server --test web_client

/** The REST bodies of the accounts API, gathered in one schema file (`proto/accounts.schema.json`). */
export type AccountsApi = ({
  NewGuest: NewGuest;
} | {
  Credentials: Credentials;
} | {
  SessionCreated: SessionCreated;
} | {
  SessionInfo: SessionInfo[];
} | {
  Account: Account;
});

/** `GET /api/admin/actions`: newest first. */
export type AdminActionList = {
  actions: AdminAction[];
  /** Pass as `before` for the next page; absent on the last page. */
  next_before?: number | null;
};

/** `POST /api/admin/matches/{id}/away`. */
export type AwayRequest = {
  /** `false` clears the mark (default `true`). */
  away?: boolean;
  seat: number;
};

/** `GET /api/admin/matches/{id}/chat`: a page of the match's chat, both channels (`table` and `spectators`), in the order it was said. */
export type AdminMatchChat = {
  chat: ChatLine[];
  match_id: string;
  /** Pass as `after` for the next page; absent on the last page. */
  next_after?: number | null;
};

/** `GET /api/admin/matches`: one page, newest first. */
export type AdminMatchList = {
  matches: AdminMatchSummary[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  next_cursor?: string | null;
};

/** `GET /api/admin/matches/{id}/log`: a page of the log, in seq order. */
export type AdminMatchLog = {
  commands: AdminLogEntry[];
  created_at: string;
  match_id: string;
  /** Pass as `after` for the next page; absent on the last page. */
  next_after?: number | null;
  rules_version: string;
  status: MatchStatus;
};

/** `GET /api/admin/matches/{id}/secrets`: the secret state of a match that is over. */
export type AdminMatchSecrets = {
  /** At `seq`, the end. */
  end: Secrets;
  match_id: string;
  seq: number;
  /** Right after the opening (seq 0): the first tile is drawn already, so `pile` is every tile drawn after it, in order. */
  start: Secrets;
};

/** `GET /api/admin/matches/{id}/state?seq=N`: the public view at seq N, replayed through the rules (what a subscribed client had at that seq). */
export type AdminMatchState = {
  match_id: string;
  seq: number;
  view: View;
};

/** `GET /api/admin/matches/{id}` and each item of the list. */
export type AdminMatchSummary = {
  created_at: string;
  /** The map's id when `modules` has `map`. */
  map_id?: string | null;
  match_id: string;
  modules: ModuleName[];
  /** Cluster mode: the node that runs the match now (holds its lease); absent when no node does, and on a single server. */
  owner?: string | null;
  players: AdminSeat[];
  /** The replay version the match is stored with. */
  rules_version: string;
  /** The final scores in seat order, for a finished match (read from its last events). */
  scores?: number[] | null;
  /** Commands stored: the match's current seq. */
  seq: number;
  status: MatchStatus;
  /** When the status last changed (or the match was created). */
  updated_at: string;
};

/** The admin API's moderation bodies, gathered in one schema file (`proto/admin-moderation.schema.json`). */
export type ModerationApi = ({
  SuspendRequest: SuspendRequest;
} | {
  AccountStanding: AccountStanding;
} | {
  ResetLink: ResetLink;
} | {
  ReportList: ReportList;
} | {
  ResolveReport: ResolveReport;
});

/** `PUT /api/admin/accounts/{id}/admin`: gives a registered account the admin role (or takes it away). An admin account's session opens the admin API like the admin token. */
export type AdminRoleRequest = {
  admin: boolean;
};

/** Client to server. */
export type ClientMessage = ({
  type: "auth";
  token: string;
} | {
  type: "subscribe";
  match_id: string;
  since?: number | null;
} | {
  type: "unsubscribe";
  match_id: string;
} | {
  type: "command";
  command: Command;
  id: string;
} | {
  type: "take_seat";
  match_id: string;
} | {
  type: "watch";
  invite_code: string;
  match_id: string;
  since?: number | null;
} | {
  type: "subscribe_lobby";
  lobby_id: string;
} | {
  type: "unsubscribe_lobby";
  lobby_id: string;
} | {
  type: "chat";
  lobby_id?: string | null;
  match_id?: string | null;
  text: string;
} | {
  type: "mute";
  account_id?: string | null;
  match_id?: string | null;
  seat?: number | null;
} | {
  type: "unmute";
  account_id?: string | null;
  match_id?: string | null;
  seat?: number | null;
});

/** `POST /api/matches`: create a match with one seat per colour. */
export type CreateMatch = {
  /** A game clock for every player; none when absent (the match waits for each player). */
  clock?: (ClockSettings | null);
  /** Forced pile order, for tests and scenarios; refused unless the server allows test setups. */
  draw_order?: string[] | null;
  /** Meeples per player (default 7; 9 on a map). */
  meeples?: number | null;
  modules?: Modules;
  /** Colours in turn order (2 to 6). */
  players: Colour[];
};

/** The answers of a match's history for its players and spectators, and of `GET /api/whoami`, gathered in one schema file (`proto/history.schema.json`). */
export type HistoryApi = ({
  MatchLog: MatchLog;
} | {
  MatchChat: MatchChat;
} | {
  Whoami: Whoami;
});

/** The REST bodies of the lobby API, gathered in one schema file (`proto/lobbies.schema.json`). */
export type LobbiesApi = ({
  CreateLobby: CreateLobby;
} | {
  JoinLobby: JoinLobby;
} | {
  PickColour: PickColour;
} | {
  SetReady: SetReady;
} | {
  SeatChoice: SeatChoice;
} | {
  BotChoice: BotChoice;
} | {
  LobbyState: LobbyState;
} | {
  LobbyList: LobbyList;
} | {
  LobbyStarted: LobbyStarted;
});

/** The answer to [`CreateMatch`]: the match id and one secret token per seat. */
export type MatchCreated = {
  match_id: string;
  seats: SeatToken[];
};

/** A player's own account (`/api/me/*`), reports and password resets, gathered in one schema file (`proto/me.schema.json`). */
export type MeApi = ({
  MyMatches: MyMatches;
} | {
  PasswordChange: PasswordChange;
} | {
  AccountDeletion: AccountDeletion;
} | {
  PasswordReset: PasswordReset;
} | {
  AccountExport: AccountExport;
} | {
  NewReport: NewReport;
} | {
  ReportCreated: ReportCreated;
});

/** The answers of the ratings API and of a finished match's replay, gathered in one schema file (`proto/ratings.schema.json`). */
export type RatingsApi = ({
  Leaderboard: Leaderboard;
} | {
  PlayerProfile: PlayerProfile;
} | {
  MatchReplay: MatchReplay;
} | {
  RecomputeReport: RecomputeReport;
});

export type Scenario = {
  description?: string;
  expect?: Expect;
  name: string;
  /** Rule ids this scenario checks (B6, T7, ...). */
  rules?: string[];
  setup: Setup;
  steps: Step[];
};

/** Server to client. */
export type ServerMessage = ({
  type: "welcome";
  protocol_version: number;
  rules_version: string;
  server_version: string;
} | {
  type: "authenticated";
  match_id: string;
  seat: number;
} | {
  type: "snapshot";
  match_id: string;
  seq: number;
  view: MatchView;
} | {
  type: "diff";
  /** Present when the server made this move for a player (a default at a deadline, a clock that ran out, a player away). */
  by_server?: (ServerMove | null);
  events: Event[];
  match_id: string;
  patch: PatchOp[];
  seq: number;
} | {
  type: "ack";
  id: string;
  match_id: string;
  seq: number;
} | ErrorBody & {
  type: "error";
} | {
  type: "identified";
  account: Account;
} | {
  type: "lobby";
  lobby: LobbyState;
} | {
  type: "lobby_closed";
  lobby_id: string;
} | ChatLine & {
  type: "chat";
} | {
  type: "chat_removed";
  id: number;
  lobby_id?: string | null;
  match_id?: string | null;
});

/** An account's webhook and the notices posted to it, gathered in one schema file (`proto/webhooks.schema.json`). */
export type WebhooksApi = ({
  SetWebhook: SetWebhook;
} | {
  WebhookCreated: WebhookCreated;
} | {
  WebhookInfo: WebhookInfo;
} | {
  TurnNotice: TurnNotice;
});

/** An account: a guest (a display name only) or registered (name and password). */
export type Account = {
  admin: boolean;
  id: string;
  kind: AccountKind;
  name: string;
};

/** `DELETE /api/me`: the account's password, again. */
export type AccountDeletion = {
  password: string;
};

/** `GET /api/me/export`: everything the server keeps about the caller's account. */
export type AccountExport = {
  account: Account;
  /** Every chat line the account said, oldest first. */
  chat: ChatLine[];
  created_at: string;
  /** Every match where the account holds a seat, newest first. */
  matches: MyMatch[];
  /** Its sessions' creation times (the tokens are not kept). */
  sessions: string[];
};

export type AccountKind = "guest" | "registered";

/** An account as the moderation screens show it (`GET /api/admin/accounts/{id}`, and the answer of a suspension). */
export type AccountStanding = {
  account: string;
  created_at: string;
  /** `guest`, `registered` or `deleted`. */
  kind: string;
  name: string;
  /** The account's live sessions. */
  sessions: number;
  /** A suspension in force. */
  suspension?: (Suspension | null);
};

/** One entry of the audit trail. */
export type AdminAction = {
  /** `abort`, `away`, `secrets` or `scenario`. */
  action: string;
  /** Who: `admin_token` (the configured token), later `account:<id>`. */
  actor: string;
  at: string;
  /** The request's parameters. */
  detail: unknown;
  id: number;
  match_id?: string | null;
  /** `ok`, or the error code the action was refused with. */
  outcome: string;
};

/** One stored command of a match. */
export type AdminLogEntry = {
  command: Command;
  /** The id the sender gave the command (the server's start with `server:`). */
  command_id: string;
  /** When it was stored. */
  created_at: string;
  events: Event[];
  origin: Origin;
  seat: number;
  seq: number;
};

/** A seat of a match. */
export type AdminSeat = {
  /** The account that holds the seat (a match from a lobby); none for a seat token's seat. */
  account?: string | null;
  /** Since when the player is marked away (by an admin, or when their game clock ran out). */
  away_since?: string | null;
  colour: Colour;
  /** That account's display name. */
  name?: string | null;
  seat: number;
};

/** A printed (non-neutral) border side (P4). `country` is for people; the rules ignore it. */
export type BorderPrint = {
  country?: string | null;
  pos: Pos;
  print: Print;
  side: Side;
};

/** `POST /api/lobbies/{id}/bot` (host only): a seat, and how strong its bot plays (`easy` unless given). */
export type BotChoice = {
  level?: BotLevel;
  seat: number;
};

/** How strong a seat the server plays plays. */
export type BotLevel = ("random" | "easy" | "medium" | "hard");

/** The inclusive bounding box of a map's outline: `min` is `(0, 0)`. */
export type Bounds = {
  max: Pos;
  min: Pos;
};

/** Where a chat message was said. */
export type ChatChannel = ("table" | "spectators" | "lobby");

/** Who said a chat message: a seat (table channel) and/or an account. */
export type ChatFrom = {
  account_id?: string | null;
  /** The account's display name when it spoke. */
  name?: string | null;
  seat?: number | null;
};

/** A chat message as delivered (and as the admin API lists it). */
export type ChatLine = {
  /** Unix time in milliseconds when the server stored it. */
  at: number;
  channel: ChatChannel;
  from: ChatFrom;
  /** The line's id as stored: what a report or an admin's removal names. Absent only from a line that was never stored. */
  id?: number | null;
  lobby_id?: string | null;
  match_id?: string | null;
  text: string;
};

/** A map chip (P7): face down until a tile is placed on its square (P8). */
export type Chip = {
  grape: Grape;
  /** 1 or 2 points. */
  value: number;
};

/** A chip forced on a square (scenarios). */
export type ChipAt = {
  grape: Grape;
  pos: Pos;
  value: number;
};

/** A match's game clock: every player starts with `bank_ms` and gets `increment_ms` added when each of their turns ends. Realtime play (`5 min + 20 s`: `{"bank_ms": 300000, "increment_ms": 20000}`) and turn-based play (`3 days + 1 day`: `{"bank_ms": 259200000, "increment_ms": 86400000}`) are the same clock at different scales: both run on the wall clock, also while the server is down (the stored command times are the truth). */
export type ClockSettings = {
  /** Each player's starting time, in milliseconds: 10 s to 30 days. */
  bank_ms: number;
  /** Added to a player's bank when each of their turns ends, in milliseconds: 0 to 7 days. */
  increment_ms: number;
};

/** A player's game clock as of the view's seq. A client counts it down itself: while `running_since` is set, the time left now is `remaining_ms - (now - running_since)`; the server sends no diff per second. */
export type ClockView = {
  player: number;
  /** Milliseconds left in the bank at `running_since` (or now, when stopped). */
  remaining_ms: number;
  /** Unix time in milliseconds since which the clock runs (the player must decide in their turn); absent while it is stopped. */
  running_since?: number | null;
};

/** Player colours (B3). */
export type Colour = "red" | "green" | "blue" | "yellow" | "black" | "pink";

/** A command of one player. */
export type Command = ({
  type: "place_tile";
  pos: Pos;
  rotation: Rotation;
} | {
  type: "place_meeple";
  figure?: Figure;
  target: Target;
} | {
  type: "place_tollhouse";
  pos: Pos;
} | {
  type: "pass";
} | {
  type: "choose_pawn";
  pawn: Pawn;
} | {
  type: "set_pawn_preference";
  preference?: (PawnPreference | null);
} | {
  type: "dispatch_action";
  meeple?: (MeepleRef | null);
} | {
  type: "dispatch_points";
} | {
  type: "draw_dispatch";
} | {
  type: "take_double_turn";
} | {
  type: "set_double_turn_preference";
  preference?: (DoubleTurnPreference | null);
} | {
  type: "sell_wine";
  chips: Chip[];
  sale: Sale;
});

/** Exactly `count` events (of a step, or of the whole game) match `event`. */
export type Count = {
  count: number;
  /** A partial event. */
  event: unknown;
};

/** `POST /api/lobbies`: the caller becomes the host and takes seat 0. */
export type CreateLobby = {
  clock?: (ClockSettings | null);
  /** Meeples per player (1 to 12; default 7, 9 on a map). */
  meeples?: number | null;
  modules?: LobbyModules;
  /** 1 to 48 characters, no control characters. */
  name: string;
  /** Listed and open to all (default), or private: joined and watched with the invite code. */
  public?: boolean;
  /** The match's result changes its players' ratings (default: not rated). A rated lobby is public, and seats registered accounts only: no guest, no bot. */
  rated?: boolean;
  /** 2 to 6. */
  seats: number;
};

/** `POST /api/accounts` (register) and `POST /api/sessions` (log in). */
export type Credentials = {
  name: string;
  password: string;
};

/** An open decision of a player who is not the active one, and when the server answers it for them with its default (the preference, else the scoring pawn, ...), as a command of its own. Answering before `at` cancels it. */
export type Deadline = {
  /** Unix time in milliseconds. */
  at: number;
  player: number;
};

export type Decision = ({
  type: "place_tile";
  placements: Placement[];
  player: number;
  tile: string;
} | {
  type: "place_follower";
  builder_targets?: Target[];
  /** Inns & Cathedrals: where the large meeple may go (`place_meeple` with `figure: large_meeple`), while it is in the supply (I4). */
  large_meeple_targets?: Target[];
  meeple_targets: Target[];
  pig_targets?: Target[];
  player: number;
  pos: Pos;
  tollhouse_targets?: Pos[];
} | {
  type: "choose_pawn";
  messenger: number;
  player: number;
  points: number;
  reason: ScoreReason;
  scoring: number;
} | {
  type: "dispatch";
  action: boolean;
  dispatch: number;
  meeples?: MeepleRef[];
  player: number;
} | {
  type: "chain_dispatch";
  player: number;
} | {
  type: "double_turn";
  player: number;
  pos: Pos;
} | {
  type: "sell_wine";
  player: number;
  pos: Pos;
  sales: WineSale[];
});

/** A standing answer to the builder's double turn (R9). */
export type DoubleTurnPreference = ("take" | "decline");

/** A refusal, with a stable code. */
export type ErrorBody = {
  code: ErrorCode;
  /** The client's command id, when the error answers a command. */
  id?: string | null;
  message: string;
  /** With `code = rate_limited`: milliseconds until the limit lets the next one through. */
  retry_after_ms?: number | null;
  /** With `code = rule`: the rule id in the rules reference (for example `B4`). */
  rule?: string | null;
  /** With `code = rule`: the rules' own code (for example `edge_mismatch`). */
  rule_code?: string | null;
};

export type ErrorCode = ("unknown_match" | "unknown_lobby" | "unknown_session" | "malformed" | "too_large" | "binary" | "bad_token" | "unauthenticated" | "already_authenticated" | "rule" | "unavailable" | "busy" | "internal" | "aborted" | "not_finished" | "not_active" | "spectator" | "bad_name" | "name_taken" | "bad_password" | "bad_credentials" | "not_your_seat" | "bad_option" | "invite_required" | "seat_taken" | "colour_taken" | "not_host" | "not_in_lobby" | "already_in_lobby" | "not_ready" | "lobby_started" | "bad_chat" | "not_in_chat" | "rate_limited" | "too_many_lobbies" | "too_many_sessions" | "unsupported_media_type" | "forbidden_origin" | "suspended" | "unknown_account" | "already_reported" | "bad_report" | "bad_reset");

/** One event. Events of one command come in the order they happened (B11). */
export type Event = ({
  type: "game_started";
  pile: number;
  players: Colour[];
  pos: Pos;
  rotation: Rotation;
  start_tile: string;
} | {
  type: "start_tile_placed";
  pos: Pos;
  rotation: Rotation;
  tile: string;
} | {
  type: "turn_started";
  player: number;
  turn: number;
} | {
  type: "tile_drawn";
  player: number;
  tile: string;
} | {
  type: "tile_discarded";
  player: number;
  tile: string;
} | {
  type: "tile_placed";
  player: number;
  pos: Pos;
  rotation: Rotation;
  tile: string;
} | {
  type: "meeple_placed";
  /** Which figure (absent: a meeple): the large meeple (I4), the builder (R8) or the pig (R12). */
  figure?: Figure;
  player: number;
  pos: Pos;
  target: Target;
} | {
  type: "passed";
  player: number;
} | {
  type: "feature_scored";
  /** Inns & Cathedrals: a cathedral set the city's rate: 3 a tile and coat complete (I9), 0 incomplete at the end (I10). */
  cathedral?: boolean;
  /** Coats of arms (cities). */
  coats: number;
  complete: boolean;
  feature: FeatureKind;
  /** Inns & Cathedrals: an inn set the road's rate: 2 a tile complete (I7), 0 incomplete at the end (I8). */
  inn?: boolean;
  meeples: MeepleCount[];
  /** Points each winner scores. */
  points: number;
  /** The feature's tile with the smallest (x, y): where to point at it. */
  pos: Pos;
  /** Distinct tiles (a tile counts once even if the feature crosses it twice). */
  tiles: number;
  /** The players with the most meeples (all tied players score, B6). */
  winners: number[];
} | {
  type: "field_scored";
  /** Completed cities touching the field. */
  cities: number;
  meeples: MeepleCount[];
  /** R13: the winners whose own pig stands in the field; each scores 4 a city instead. */
  pigs?: number[];
  points: number;
  pos: Pos;
  winners: number[];
} | {
  type: "meeple_returned";
  /** Which figure (absent: a meeple): the large meeple (I6), the builder or the pig (R11, R12). */
  figure?: Figure;
  player: number;
  pos: Pos;
  target: Target;
} | {
  type: "tollhouse_placed";
  player: number;
  pos: Pos;
  value: number;
} | {
  type: "tollhouse_moved";
  from: Pos;
  player: number;
  to: Pos;
  value: number;
} | {
  type: "toll_raised";
  farmhouses: number;
  /** True during final scoring (T10). */
  final?: boolean;
  gardens: number;
  highwaymen: number;
  player: number;
  points: number;
  /** The crossroads the tollhouse stands on. */
  pos: Pos;
  /** The road's tile with the smallest (x, y). */
  road: Pos;
  sheds: number;
  travellers: number;
  /** The value used (1 or 2); at the end of the game always 1 (T10). */
  value: number;
} | {
  type: "tollhouse_turned";
  from: number;
  player: number;
  pos: Pos;
  to: number;
} | {
  type: "game_ended";
  scores: number[];
} | {
  type: "pawn_moved";
  from: number;
  pawn: Pawn;
  player: number;
  reason: ScoreReason;
  to: number;
} | {
  type: "pawn_preference_set";
  player: number;
  preference?: (PawnPreference | null);
} | {
  type: "dispatch_drawn";
  dispatch: number;
  player: number;
} | {
  type: "dispatch_resolved";
  action: boolean;
  dispatch: number;
  player: number;
  points: number;
  pos?: (Pos | null);
} | {
  type: "pawns_summed";
  player: number;
  score: number;
} | {
  type: "chip_taken";
  chip: Chip;
  player: number;
  points: number;
  pos: Pos;
} | {
  type: "wine_sold";
  chips: Chip[];
  player: number;
  points: number;
  pos: Pos;
  sale: Sale;
  town?: string | null;
} | {
  type: "goods_taken";
  goods: GoodsTokens;
  player: number;
  pos: Pos;
} | {
  type: "double_turn_earned";
  player: number;
  pos: Pos;
} | {
  type: "double_turn_started";
  player: number;
} | {
  type: "double_turn_preference_set";
  player: number;
  preference?: (DoubleTurnPreference | null);
} | {
  type: "goods_majority";
  goods: Goods;
  points: number;
  tokens: number;
  winners: number[];
});

export type Expect = {
  /** Partial events that must not occur at all. */
  absent?: unknown[];
  /** How many events of the whole game match each partial event. */
  counts?: Count[];
  /** Events that must occur over the whole game, in this order (others may come between). Each is a partial event: every field given must equal the event's field. */
  events?: unknown[];
  /** Whether the game is over after the last step. */
  finished?: boolean | null;
  /** Scores in seat order after the last step. */
  scores?: number[] | null;
  /** The public view after the last step must contain this partial view. */
  view?: unknown;
};

/** The configuration families that are rated apart: a duel plays otherwise than a table of five. */
export type Family = ("duel" | "multi");

/** The four kinds of feature a meeple can stand on. */
export type FeatureKind = "road" | "city" | "field" | "monastery";

/** Which of a player's figures a `place_meeple` puts on the board (R4: one figure a phase 2). */
export type Figure = ("meeple" | "large_meeple" | "builder" | "pig");

/** The trade goods of Traders & Builders (R1, R5): a symbol on a city, a token in a player's hand. */
export type Goods = "wine" | "grain" | "cloth";

/** A player's trade goods tokens, or the goods of one city (R5). */
export type GoodsTokens = {
  cloth: number;
  grain: number;
  wine: number;
};

/** The grape colour a town buys (P5) and a chip shows (P7). */
export type Grape = "purple" | "light_blue" | "orange";

/** `POST /api/lobbies/{id}/join`: a seat (default: the first free) and a colour (default: the first free). */
export type JoinLobby = {
  colour?: (Colour | null);
  invite_code?: string | null;
  seat?: number | null;
};

/** A printed large city (P3). Its squares count as city tiles and its coats as coats of arms. */
export type LargeCity = {
  /** Printed coats of arms. */
  coats: number;
  /** Its mark in the data file's outline (an upper-case letter). */
  mark: string;
  name: string;
  /** The open city edges: a city square and its side that faces a placeable square, sorted. */
  open: unknown[][];
  /** The printed squares, sorted by `(x, y)`. */
  squares: Pos[];
};

/** `GET /api/ratings?family=…`: a page of one family's leaderboard, best first. */
export type Leaderboard = {
  entries: LeaderboardEntry[];
  family: Family;
  /** The `offset` of the next page, when there is one. */
  next_offset?: number | null;
};

/** A line of the leaderboard. */
export type LeaderboardEntry = {
  family: Family;
  /** Rated matches played in this family. */
  games: number;
  mu: number;
  name: string;
  /** Fewer rated matches than [`PROVISIONAL_GAMES`]: the estimate is still rough. */
  provisional: boolean;
  /** 1 for the best rating of the family. */
  rank: number;
  /** The conservative estimate `mu - 3 sigma` that ranks players. */
  rating: number;
  sigma: number;
};

/** `GET /api/lobbies`: open public lobbies and running public matches. */
export type LobbyList = {
  lobbies: LobbyState[];
  matches: WatchableMatch[];
};

/** The modules a lobby offers (the France chips need the France map). */
export type LobbyModules = {
  /** The France chips (P7–P10); needs `france`. */
  chips?: boolean;
  /** Play on the France map (Carcassonne Maps). */
  france?: boolean;
  /** Inns & Cathedrals (I1–I18): its 18 tiles and a large meeple per player. */
  inns_cathedrals?: boolean;
  messages?: boolean;
  tollkeepers?: boolean;
  /** Traders & Builders (R1–R20): its 24 tiles, a builder and a pig per player, goods. */
  traders_builders?: boolean;
};

export type LobbySeat = {
  colour?: (Colour | null);
  occupant?: (Occupant | null);
  /** Bots are always ready. */
  ready: boolean;
  seat: number;
};

/** `POST /api/lobbies/{id}/start`: the match was created; every member also gets it pushed. */
export type LobbyStarted = {
  match_id: string;
};

/** A lobby, whole: what `GET /api/lobbies/{id}` answers and `lobby` pushes. */
export type LobbyState = {
  clock?: (ClockSettings | null);
  /** The host's account (`None` only while a lobby closes). */
  host?: string | null;
  id: string;
  /** Private lobbies: the code to join and watch (shown to members only). */
  invite_code?: string | null;
  match_id?: string | null;
  meeples?: number | null;
  modules: LobbyModules;
  name: string;
  public: boolean;
  /** Its match is rated (see [`CreateLobby::rated`]). */
  rated?: boolean;
  seats: LobbySeat[];
  status: LobbyStatus;
  /** Bumped on every change. */
  version: number;
};

export type LobbyStatus = ("open" | "started");

/** One step of a match's history: a move (seq 1 and on) or the opening (seq 0), with its public events. */
export type LogEntry = {
  /** Present when the server made the move for the seat. */
  by_server?: (ServerMove | null);
  events: Event[];
  /** Whose move it was; absent for the opening. */
  seat?: number | null;
  seq: number;
};

/** The public description of a map, everything a client needs to draw it (P6: the map is public state). Static: a view should carry it once, not in every diff. */
export type MapInfo = {
  /** The printed border sides; every other border side is neutral. */
  borders: BorderPrint[];
  bounds: Bounds;
  cities: LargeCity[];
  id: string;
  name: string;
  /** Rows from north (`y = max`) to south (`y = 0`), one character per square from `x = 0`: `#` placeable, `.` not on the map, an upper-case letter a square of the large city with that mark. */
  outline: string[];
  starts: StartSquare[];
  towns: Town[];
};

/** A match on a printed map (P1–P6). */
export type MapSetup = {
  /** Scenarios and tests: the chips' layout, instead of laying them with the seed (P7). */
  chip_layout?: ChipAt[] | null;
  /** The Map Chips of France (P7–P10). */
  chips?: boolean;
  /** Scenarios and tests: the map itself, in the map file format (`docs/maps.md`), instead of a built-in one; `map` is its name. */
  data?: string | null;
  /** A built-in map's id (`france`). */
  map: string;
  /** P2: the two start squares by name, the start tile's first. `None`: drawn from the seed. */
  starts?: string[] | null;
};

/** The public state of a map: the printed map (it never changes, so JSON Patches between views never repeat it), where chips lie face down, and each player's chips face up. */
export type MapView = {
  /** Squares where a chip lies face down: only "a chip lies here", never its face (P7, B9). */
  chips?: Pos[];
  /** Per seat, the chips taken and not sold, face up (P8); empty without the France chips. */
  hands?: Chip[][];
  info: MapInfo;
};

/** `GET /api/matches/{id}/chat`: a page of the chat the asker may read (a player the table, a spectator both channels), oldest first. */
export type MatchChat = {
  /** Pass as `before` for the page before this one; absent on the first page of the chat. */
  before?: number | null;
  chat: ChatLine[];
  match_id: string;
};

/** `GET /api/matches/{id}/log`: a page of the history, oldest first. */
export type MatchLog = {
  /** Pass as `before` for the page before this one; absent when this page reaches the opening. */
  before?: number | null;
  entries: LogEntry[];
  match_id: string;
};

/** `GET /api/matches/{id}/replay?seq=N`: a finished match at seq N, for stepping through it. */
export type MatchReplay = {
  /** The match's last seq (its end). */
  last_seq: number;
  match_id: string;
  /** Every player's score after each seq, from 0 to `last_seq`: `scores[seq][seat]`. */
  scores: number[][];
  /** What happened at seq N. */
  step: ReplayStep;
  /** The public view after seq N. */
  view: MatchView;
};

/** Where a match stands. */
export type MatchStatus = ("finished" | "active" | "broken" | "aborted");

/** The view a client is sent (in a snapshot, and what the patches of diffs apply to): the rules' public view, plus what the server adds to it, which the rules cannot know (they have no clock). */
export type MatchView = {
  /** Whose turn it is. */
  active: number;
  /** The players the server played for because their clock ran out or they were away, and who have not had a command of theirs accepted since (sorted); absent when none. A function of the log, like the rest of the view. */
  away?: number[];
  /** Placed tiles keyed by square, `"x,y"`. */
  board: {
    [key: string]: TileView;
  };
  /** The game clocks, one per player in seat order; absent in a match without a clock. */
  clocks?: ClockView[];
  /** The pending deadlines, sorted by player (then time); absent when there is none. */
  deadlines?: Deadline[];
  /** The decisions open now. */
  decisions: Decision[];
  /** Tiles that fitted nowhere and left the game (B4). */
  discarded: string[];
  /** The tile drawn this turn and not yet placed. */
  drawn?: string | null;
  finished: boolean;
  /** The map the match is played on (P1–P6) and its chips (P7–P10); absent on an open table. */
  map?: (MapView | null);
  /** Meeples on the board keyed by `"x,y target"`, for example `"0,1 road:E"`. */
  meeples: {
    [key: string]: MeepleView;
  };
  /** The Messages: both pawns of every player and the stack's size (never its order). */
  messages?: (MessagesView | null);
  modules: Modules;
  /** Who sits in each seat, in seat order, in a match started from a lobby: the account's name, or a bot. Absent for a match created over `POST /api/matches`, whose seats are only tokens. */
  names?: SeatName[];
  /** Tiles still in the pile, by tile id (the order is secret). */
  pile: {
    [key: string]: number;
  };
  pile_size: number;
  /** Seats in turn order. */
  players: PlayerView[];
  /** Turn number, from 1. */
  turn: number;
};

/** How many meeples one player has on a feature, as majority counts them. */
export type MeepleCount = {
  /** The player's strength on the feature: 1 a meeple, 2 a large meeple (I5). */
  count: number;
  /** Inns & Cathedrals: how many of them are large meeples (each counted 2 in `count`). */
  large?: number;
  player: number;
};

/** A meeple on the board, named as the view names it: its tile's square and its feature there. */
export type MeepleRef = {
  pos: Pos;
  target: Target;
};

export type MeepleView = {
  /** Which figure stands there (absent: a meeple): the large meeple (I4), a builder or a pig (R8, R12); a builder or pig is keyed `"x,y target figure"`. */
  figure?: Figure;
  player: number;
  pos: Pos;
  target: Target;
};

/** The Messages' public state (M1). */
export type MessagesView = {
  /** Per seat: both pawns and the standing preference. */
  players: PawnsView[];
  /** Dispatches face down in the stack (8, or 7 while one is being resolved). */
  stack: number;
};

/** A module switched on in a match's setup. */
export type ModuleName = ("tollkeepers" | "messages" | "inns_cathedrals" | "traders_builders" | "map" | "chips");

/** The expansions switched on for a match. Each is a module of the rules crate. */
export type Modules = {
  /** Inns & Cathedrals (I1–I18): its 18 tiles join the pile and each player gets a large meeple. Left out of the JSON when off, so views of older matches stay byte for byte. */
  inns_cathedrals?: boolean;
  /** Carcassonne Maps (P1–P6): play on a printed map, optionally with the France chips (P7–P10). */
  map?: (MapSetup | null);
  /** The Messages (M1–M18): a messenger per player beside the scoring pawn, and the dispatch stack. Left out of the JSON when off, so views of older matches stay byte for byte. */
  messages?: boolean;
  /** The Tollkeepers (T1–T10): its 10 tiles join the pile and each player gets a tollhouse. */
  tollkeepers?: boolean;
  /** Traders & Builders (R1–R20): its 24 tiles join the pile, each player gets a builder and a pig, completed cities give trade goods. Left out of the JSON when off, like `messages`. */
  traders_builders?: boolean;
};

/** One match where the caller holds a seat (`GET /api/me/matches`). */
export type MyMatch = {
  /** The match's game clock, if it has one. */
  clock?: (ClockSettings | null);
  created_at: string;
  /** When the server next plays a default in this match if nobody moves first (a bank or a decision timeout running out, an away player's turn); none when nothing is pending. */
  deadline_at?: string | null;
  /** A finished match: when it ended. */
  finished_at?: string | null;
  /** The map, for a match played on one. */
  map_id?: string | null;
  match_id: string;
  modules: ModuleName[];
  /** A finished match: the caller's place (1 for the best score; tied players share a place). */
  place?: number | null;
  players: MyMatchPlayer[];
  /** A finished match: the final scores, in seat order. */
  scores?: number[] | null;
  /** The caller's seat. */
  seat: number;
  /** Commands stored so far: a client that follows the match subscribes with `since` = this, and gets the moves after it without a snapshot. */
  seq: number;
  status: MyMatchStatus;
  /** A running match: the seat whose turn it is. */
  turn?: number | null;
  /** When the current turn began. */
  turn_since?: string | null;
  /** When the status last changed (or the match was created). */
  updated_at: string;
  /** A running match: it is the caller's turn. */
  your_turn: boolean;
};

/** A seat of one of the player's matches. */
export type MyMatchPlayer = {
  /** Marked away (a game clock ran out, or an admin marked them). */
  away: boolean;
  colour: Colour;
  /** The display name of the account that holds the seat (`deleted player` for a deleted account); none for a seat no account holds (a bot's, a seat token's). */
  name?: string | null;
  seat: number;
  /** This seat is the caller's. */
  you: boolean;
};

/** Where one of the player's matches stands. */
export type MyMatchStatus = ("finished" | "running" | "ended");

/** `GET /api/me/matches`: a page, newest first. */
export type MyMatches = {
  matches: MyMatch[];
  /** Asks for the next page (`cursor=`); absent on the last. */
  next_cursor?: string | null;
};

/** `POST /api/accounts/guest`. */
export type NewGuest = {
  name: string;
};

/** `POST /api/reports`: a chat line (`chat_id`) or a player (`account_id`), exactly one. */
export type NewReport = {
  account_id?: string | null;
  chat_id?: number | null;
  /** 1 to [`MAX_REPORT_REASON`] characters. */
  reason: string;
};

/** Why a notice was sent. */
export type NoticeKind = ("your_turn" | "reminder");

/** Who sits on a lobby seat. */
export type Occupant = ({
  account_id: string;
  kind: "player";
  name: string;
} | {
  kind: "bot";
  level?: BotLevel;
});

/** Who sent a command. */
export type Origin = ("player" | "server");

/** `PUT /api/me/password`. */
export type PasswordChange = {
  new_password: string;
  old_password: string;
};

/** `POST /api/password-resets`: the token of an admin's reset link and the new password. */
export type PasswordReset = {
  password: string;
  token: string;
};

/** One RFC 6902 operation, as in the `json-patch` crate's serialization. */
export type PatchOp = ({
  op: "add";
  path: string;
  value: unknown;
} | {
  op: "remove";
  path: string;
} | {
  op: "replace";
  path: string;
  value: unknown;
} | {
  from: string;
  op: "move";
  path: string;
} | {
  from: string;
  op: "copy";
  path: string;
} | {
  op: "test";
  path: string;
  value: unknown;
});

/** One of a player's two pawns on the scoring track (M1). */
export type Pawn = "scoring" | "messenger";

/** A standing answer to every pawn choice (M3). */
export type PawnPreference = ("scoring" | "messenger" | "dark_in_my_turn");

export type PawnsView = {
  messenger: number;
  preference?: (PawnPreference | null);
  /** The scoring pawn's space, counted on past 50 (after M16: the whole score). */
  scoring: number;
};

/** `POST /api/lobbies/{id}/colour`. */
export type PickColour = {
  colour: Colour;
};

/** Where the drawn tile may go: a square and the rotations that fit there (B4). */
export type Placement = {
  pos: Pos;
  rotations: Rotation[];
};

/** `GET /api/players/{name}`: a registered player's ratings and their history, newest first. */
export type PlayerProfile = {
  /** The most recent rated matches (at most 50), newest first. */
  history: RatingChange[];
  name: string;
  /** One per family the player has played rated matches in. */
  ratings: RatingView[];
};

export type PlayerView = {
  /** The builder in the supply: 1, or 0 while it stands on the board (R8). */
  builder?: number | null;
  colour: Colour;
  /** The standing answer to the builder's double turn, if set (R9). */
  double_turn?: (DoubleTurnPreference | null);
  /** The trade goods tokens taken (public, R5). */
  goods?: (GoodsTokens | null);
  /** Inns & Cathedrals: large meeples in the supply (0 or 1, I4); absent without the module. */
  large_meeples?: number | null;
  /** Meeples in the supply. */
  meeples: number;
  /** The pig in the supply: 1, or 0 while it stands on the board (R12). */
  pig?: number | null;
  score: number;
  /** What the score is made of, by kind of scoring; the parts add up to `score`. */
  scored?: Scored;
  /** The Tollkeepers: the tollhouse, once in play. */
  tollhouse?: (TollhouseView | null);
};

/** A square of the board. */
export type Pos = {
  /** Grows to the east. */
  x: number;
  /** Grows to the north. */
  y: number;
};

/** What the map prints on a border side (P4). A tile on that square must show the same on that side; a neutral border takes any edge. */
export type Print = ({
  kind: "neutral";
} | {
  kind: "road";
} | {
  coat: boolean;
  kind: "city";
});

/** One seat of a rated match, as its result was recorded. */
export type RatedSeat = {
  name: string;
  /** 1 for the winner; tied players share a place. */
  place: number;
  /** Final points. */
  score: number;
};

/** One rated match in a player's history: the result and what it did to the player's rating. */
export type RatingChange = {
  after: number;
  /** The player's rating (`mu - 3 sigma`) before and after. */
  before: number;
  /** When the match ended (RFC 3339). */
  ended_at: string;
  family: Family;
  match_id: string;
  /** The player's place. */
  place: number;
  /** Every seat, in seat order. */
  seats: RatedSeat[];
};

/** One account's rating in one family. */
export type RatingView = {
  family: Family;
  /** Rated matches played in this family. */
  games: number;
  mu: number;
  /** Fewer rated matches than [`PROVISIONAL_GAMES`]: the estimate is still rough. */
  provisional: boolean;
  /** The conservative estimate `mu - 3 sigma` that ranks players. */
  rating: number;
  sigma: number;
};

/** `POST /api/admin/ratings/recompute`: every rating computed again from the recorded results of the rated matches, in the order they were rated. */
export type RecomputeReport = {
  /** Ratings whose stored value differed from the recomputed one (0 when the store was consistent). */
  changed: number;
  /** Rated matches replayed. */
  matches: number;
  /** Ratings (account and family) written. */
  ratings: number;
};

/** One step of a replay: the public events of the command at `seq` (the opening's at 0). */
export type ReplayStep = {
  by_server?: (ServerMove | null);
  events: Event[];
  /** The seat whose command it was (none for the opening). */
  seat?: number | null;
  seq: number;
};

/** A player's report, as admins see it. */
export type Report = {
  /** The reported player, or the reported chat line's sender. */
  account?: string | null;
  account_name?: string | null;
  at: string;
  /** The reported chat line, if a line was reported. */
  chat_id?: number | null;
  /** The line's text when it was reported (kept after the line is removed). */
  chat_text?: string | null;
  id: number;
  reason: string;
  reporter: string;
  reporter_name?: string | null;
  resolution?: string | null;
  resolved_at?: string | null;
  /** Who resolved it, as the audit trail names them. */
  resolved_by?: string | null;
  status: ReportStatus;
};

/** A stored report's id. */
export type ReportCreated = {
  id: number;
};

/** `GET /api/admin/reports`: newest first. */
export type ReportList = {
  /** Asks for the next page (`before=`); absent on the last. */
  next_before?: number | null;
  reports: Report[];
};

export type ReportStatus = "open" | "resolved";

/** `POST /api/admin/accounts/{id}/password-reset`: a one-time link for the player. */
export type ResetLink = {
  expires_at: string;
  /** The page that sets a new password with it: `/#reset=<token>` (a fragment, which the browser never sends to the server or in a `Referer`). */
  path: string;
  /** The secret (shown once; the server keeps its hash). */
  token: string;
};

/** `POST /api/admin/reports/{id}/resolve`. */
export type ResolveReport = {
  /** What was done (at most [`MAX_MODERATION_TEXT`] characters). */
  note: string;
};

/** Clockwise rotation of a tile in degrees. */
export type Rotation = 0 | 90 | 180 | 270;

/** P9: where a wine goes. */
export type Sale = ("abroad" | "town");

/** What a pawn moved for (M2, M17). */
export type ScoreReason = ("feature" | "field" | "toll" | "dispatch" | "chip" | "wine" | "goods");

/** A player's points by kind of scoring (each scoring is public, as an event): what the end of a game shows beside the winner. Kinds without points are left out of the JSON. */
export type Scored = {
  /** The France chips (P8). */
  chips?: number;
  cities?: number;
  /** The Messages (M7–M15). */
  dispatches?: number;
  fields?: number;
  /** Goods majorities at the end (R7). */
  goods?: number;
  monasteries?: number;
  roads?: number;
  /** The setup's start score (scenarios and tests). */
  start?: number;
  /** The Tollkeepers (T6, T10). */
  tolls?: number;
  /** Wine sold (P9). */
  wine?: number;
};

/** `POST /api/lobbies/{id}/kick` (host only): a seat. */
export type SeatChoice = {
  seat: number;
};

/** The name shown for a seat. */
export type SeatName = {
  /** Played by the server. */
  bot?: boolean;
  name: string;
};

export type SeatToken = {
  colour: Colour;
  seat: number;
  token: string;
};

/** The secret parts of a match at one moment: the seed, the face-down pile in order, the chips lying face down with their faces, and The Messages' dispatch stack in order. */
export type Secrets = {
  /** The France chips still face down, with their faces (P7), by square. */
  chips?: ChipAt[];
  /** The Messages: the dispatch stack, top first (M1). */
  dispatches?: number[] | null;
  /** The face-down pile by tile id, the next tile to be drawn first. */
  pile: string[];
  /** The seed every random draw of the match comes from. */
  seed: number;
};

/** Why the server made a move for a player (its command id is `server:<why>:<seq>`). */
export type ServerMove = ("deadline" | "clock" | "away");

/** A new session: the account and its secret token (also set as the `session` cookie). The server keeps only the token's hash. */
export type SessionCreated = {
  account: Account;
  session_id: string;
  token: string;
};

/** One of the caller's sessions (`GET /api/sessions`). */
export type SessionInfo = {
  /** RFC 3339. */
  created_at: string;
  /** The session of this request. */
  current: boolean;
  id: string;
};

/** `POST /api/lobbies/{id}/ready`. */
export type SetReady = {
  ready: boolean;
};

/** `PUT /api/me/webhook`: where to post the notices (`https://`; `http://` only on a server started with `--webhook-allow-http`). */
export type SetWebhook = {
  url: string;
};

/** Everything a match is a function of, together with the commands applied to it (B10).  The `seed` is secret (B9): it decides the pile order and never leaves the server. */
export type Setup = {
  /** The squares tiles may lie on (P1). `None`: an open table that grows as needed. */
  bounds?: (SetupBounds | null);
  /** The Messages, scenarios and tests: the dispatch stack (1–8, each once), top first; the seed then shuffles nothing. Refused by the server like `draw_order` (it reveals a secret). */
  dispatch_order?: number[] | null;
  /** Scenarios and tests: the exact pile, top first, by tile id; the seed then shuffles nothing. The start tile is placed as usual and is not part of this list. */
  draw_order?: string[] | null;
  /** Meeples per player (B3: 7; 9 is recommended on a map). */
  meeples?: number;
  modules?: Modules;
  /** Colours in turn order; 2 to 6 players (B3). */
  players: Colour[];
  /** Seeds the random generator that shuffles the pile. */
  seed?: number;
  /** Scenarios and tests: each seat's score when the match begins, in seat order (empty: 0 each), so that a case about scores or dark spaces needs no tiles to build them. */
  start_scores?: StartScore[];
  /** Start squares (B1; P2 on a map). Empty: the start tile on (0, 0), unturned. */
  starts?: SetupStartSquare[];
};

/** A rectangle of squares, both corners included. */
export type SetupBounds = {
  max: Pos;
  min: Pos;
};

/** A start square and what lies on it when the match begins. */
export type SetupStartSquare = {
  pos: Pos;
  rotation?: Rotation;
  tile?: StartTile;
};

/** A side of a square (and of a tile in board orientation). */
export type Side = "N" | "E" | "S" | "W";

/** A seat's score when the match begins. */
export type StartScore = (number | {
  messenger: number;
  scoring: number;
});

/** A start square (P2). It is an ordinary placeable square once the game has begun; it is not a town and never holds a chip. */
export type StartSquare = {
  /** Its mark in the data file's outline (a digit). */
  mark: string;
  name: string;
  pos: Pos;
};

/** What a start square holds. */
export type StartTile = ("start" | "drawn" | "open");

/** One command, and optionally the refusal it must get. */
export type Step = {
  /** Partial events the command must not produce. */
  absent?: unknown[];
  /** The command; absent when `default` is true. */
  command?: (Command | null);
  /** How many of the command's events match each partial event. */
  counts?: Count[];
  /** After the step, the open decisions must be exactly these (each a partial decision, as for events): an array in the order they opened, or `{"$any_order": [...]}` where the rules fix no order. */
  decisions?: unknown;
  /** Send the deterministic default answer of this player's oldest open decision (what the server sends when a clock runs out, M3) instead of `command`. */
  default?: boolean;
  /** The command must be refused with this [`RuleError::code`]; the game goes on unchanged. */
  error?: string | null;
  /** Partial events the command must produce, in order (see [`Expect::events`]). */
  events?: unknown[];
  /** Who sends it: any player with an open decision, active or not (M3). */
  player: number;
  /** After the step, the public view must contain this partial view (`{"messages": ...}`). */
  view?: unknown;
};

/** `POST /api/admin/accounts/{id}/suspension`. */
export type SuspendRequest = {
  /** Shown to the player when they try to log in. */
  reason: string;
  /** How long, in seconds; absent: for good. */
  seconds?: number | null;
};

/** A suspension in force. */
export type Suspension = {
  reason: string;
  since: string;
  /** Absent: for good. */
  until?: string | null;
};

/** A feature of the tile just placed, in board orientation: road:<side>, city:<side>, field:<half>, field:inner (a field that reaches no side) or monastery. */
export type Target = string;

export type TileView = {
  rotation: Rotation;
  tile: string;
};

export type TollhouseView = {
  pos: Pos;
  /** 1 (small toll) or 2 (large toll) up. */
  value: number;
};

/** A town (P5): an ordinary placeable square that buys wine of its grape colour (P9). */
export type Town = {
  /** `None` on a map played without the chips of a country that colours its towns. */
  grape?: (Grape | null);
  /** Its mark in the data file's outline (a lower-case letter). */
  mark: string;
  name: string;
  pos: Pos;
};

/** What the server posts to a webhook. */
export type TurnNotice = {
  /** When the server answers for the player (a deadline, or the game clock running out), in Unix milliseconds; absent when nothing runs. */
  due_at?: number | null;
  kind: NoticeKind;
  match_id: string;
  /** The player's seat. */
  seat: number;
  /** When this notice was made (Unix milliseconds): a receiver may refuse old ones. */
  sent_at: number;
  /** The match's seq when the decision came to wait. */
  seq: number;
};

export type View = {
  /** Whose turn it is. */
  active: number;
  /** Placed tiles keyed by square, `"x,y"`. */
  board: {
    [key: string]: TileView;
  };
  /** The decisions open now. */
  decisions: Decision[];
  /** Tiles that fitted nowhere and left the game (B4). */
  discarded: string[];
  /** The tile drawn this turn and not yet placed. */
  drawn?: string | null;
  finished: boolean;
  /** The map the match is played on (P1–P6) and its chips (P7–P10); absent on an open table. */
  map?: (MapView | null);
  /** Meeples on the board keyed by `"x,y target"`, for example `"0,1 road:E"`. */
  meeples: {
    [key: string]: MeepleView;
  };
  /** The Messages: both pawns of every player and the stack's size (never its order). */
  messages?: (MessagesView | null);
  modules: Modules;
  /** Tiles still in the pile, by tile id (the order is secret). */
  pile: {
    [key: string]: number;
  };
  pile_size: number;
  /** Seats in turn order. */
  players: PlayerView[];
  /** Turn number, from 1. */
  turn: number;
};

/** A running match from a public lobby, to watch. */
export type WatchableMatch = {
  lobby_id: string;
  match_id: string;
  modules: LobbyModules;
  name: string;
  /** Player names in seat order (`bot` for bots). */
  players: string[];
};

/** The answer to `PUT /api/me/webhook`: the secret that signs every payload, shown this once. */
export type WebhookCreated = {
  /** 64 hex digits: the HMAC-SHA256 key of `X-Carcassonne-Signature`. */
  secret: string;
  url: string;
};

/** `GET /api/me/webhook`: the account's webhook, without its secret. */
export type WebhookInfo = {
  /** When it was set (RFC 3339). */
  created_at: string;
  url: string;
};

/** `GET /api/whoami`: the request's account, or none (no session, or one that ended): never an error, so that a page asks it without logging one. */
export type Whoami = {
  account?: (Account | null);
};

/** One sale the wine decision offers (P9), with the points it would score, so that a client shows them without a table of its own. */
export type WineSale = {
  chips: Chip[];
  /** What this sale scores (P9: abroad 5, to a town 9); the `wine_sold` event carries the same. */
  points: number;
  sale: Sale;
};

