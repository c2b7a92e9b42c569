// The script the conformance session replays: one turn per model call, in the order the
// test drives the runs. The script engine takes the turn at the session's count of model
// calls so far, so each `TURN.*` index below is the model call that plays it.

const longText = (label, words) =>
  Array.from({ length: words }, (_, i) => `${label}${i}`).join(' ');

export const TEXT = {
  plain: 'Hello! I am a scripted model, and this is a plain answer.',
  beforeTools: 'Let me work that out with my tools.',
  afterTools: '12*7 is 84. There is no teleport tool, so I stayed here.',
  beforeChoice: 'I need you to pick a city.',
  declined: 'Understood: nothing booked.',
  // Long enough (600 words at 5 ms each, about 3 s) to be stopped or killed mid-stream.
  longStop: longText('stop', 600),
  longKill: longText('kill', 600),
  continued: 'Picking up where I left off.',
  afterRestart: 'I am back after the restart.',
};

export const REASONING = {
  tools: 'Arithmetic goes to the calculator; I will also try a tool that does not exist.',
  afterTools: 'The calculator said 84 and the unknown tool returned an error.',
  confirm: 'They chose a city. Booking needs an explicit yes.',
};

export const CHOICES = ['Lisbon', 'Kyoto'];

const requestInput = (args) => ({ name: 'request_input', arguments: args });

export const SCRIPT = {
  turns: [
    // 0 (a) a plain text answer
    { text: TEXT.plain },
    // 1-2 (b) reasoning, text, a calculator call and an unknown tool, then an answer
    {
      reasoning: REASONING.tools,
      text: TEXT.beforeTools,
      toolCalls: [
        { name: 'calculator', arguments: { expression: '12*7' } },
        { name: 'teleport', arguments: { to: 'the moon' } },
      ],
    },
    { reasoning: REASONING.afterTools, text: TEXT.afterTools },
    // 3-5 (c) a choice, then a confirm that is declined, then the model goes on
    {
      text: TEXT.beforeChoice,
      toolCalls: [requestInput({ prompt: 'Which city?', kind: 'choice', choices: CHOICES })],
    },
    {
      reasoning: REASONING.confirm,
      toolCalls: [requestInput({ prompt: 'Book a hotel in Kyoto?', kind: 'confirm' })],
    },
    { text: TEXT.declined },
    // 6 (d) a long text the person stops
    { text: TEXT.longStop },
    // 7 (e) a question the person cancels over REST
    { toolCalls: [requestInput({ prompt: 'What is your name?', kind: 'text' })] },
    // 8 (g) a long text the process dies in
    { text: TEXT.longKill },
    // 9 the same run, continued by itself after the restart
    { text: TEXT.continued },
    // 10 one normal run after the restart; the next model call (f) exhausts the script
    { text: TEXT.afterRestart },
  ],
};
