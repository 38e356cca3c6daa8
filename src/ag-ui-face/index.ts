/** The agent served over AG-UI (`POST /ag-ui`): face.ts runs a turn, run-view.ts maps its frames, interrupts.ts its questions. */
export { createAgUiFace, type AgUiFace } from './face.ts';
export { agentCapabilities, type CapabilitiesConfig } from './capabilities.ts';
export { encodeEvents, wantsProtobuf, PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE } from './encoding.ts';
export { foldStep, interrupted, runView, type RunView } from './run-view.ts';
export { agUiMount } from './endpoint.ts';
