export { crunch, getWeather, sendEmail, weatherAgent } from "./weather.js"
